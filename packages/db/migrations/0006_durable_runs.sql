CREATE TABLE "run_slots" (
	"workspace_id" text NOT NULL,
	"concurrency_key" text NOT NULL,
	"run_id" text NOT NULL,
	CONSTRAINT "run_slots_workspace_id_concurrency_key_pk" PRIMARY KEY("workspace_id","concurrency_key")
);
--> statement-breakpoint
DROP INDEX "runs_claim_idx";--> statement-breakpoint
ALTER TABLE "run_steps" ADD COLUMN "wake_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "definition_workspace_id" text;--> statement-breakpoint
UPDATE "runs" SET "definition_workspace_id" = "workspace_id";--> statement-breakpoint
ALTER TABLE "runs" ALTER COLUMN "definition_workspace_id" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "draft_literal" text;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "invocation" text;--> statement-breakpoint
UPDATE "runs" SET "invocation" = 'default';--> statement-breakpoint
ALTER TABLE "runs" ALTER COLUMN "invocation" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "secret_inputs" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "principal_type" text;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "idempotency_key" text;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "cancel_requested" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "deadline_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "usage" jsonb DEFAULT '{}'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "run_slots" ADD CONSTRAINT "run_slots_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "run_slots" ADD CONSTRAINT "run_slots_run_id_runs_id_fk" FOREIGN KEY ("run_id") REFERENCES "public"."runs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "run_slots_run_idx" ON "run_slots" USING btree ("run_id");--> statement-breakpoint
CREATE INDEX "runs_ws_flow_created_idx" ON "runs" USING btree ("workspace_id","flow_slug","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "runs_ws_idempotency_uq" ON "runs" USING btree ("workspace_id","idempotency_key") WHERE "runs"."idempotency_key" is not null;--> statement-breakpoint
CREATE INDEX "runs_queued_idx" ON "runs" USING btree ("created_at") WHERE "runs"."status" = 'queued';--> statement-breakpoint
CREATE INDEX "runs_waiting_idx" ON "runs" USING btree ("wake_at") WHERE "runs"."status" = 'waiting';--> statement-breakpoint
CREATE INDEX "runs_leased_idx" ON "runs" USING btree ("lease_expires_at") WHERE "runs"."status" = 'running';