CREATE TABLE "usage_batches" (
	"id" text PRIMARY KEY NOT NULL,
	"applied_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "usage_calls" (
	"workspace_id" text NOT NULL,
	"hour" timestamp with time zone NOT NULL,
	"method" text NOT NULL,
	"tool" text NOT NULL,
	"principal" text NOT NULL,
	"client" text NOT NULL,
	"outcome" text NOT NULL,
	"count" integer NOT NULL,
	"d0" integer DEFAULT 0 NOT NULL,
	"d1" integer DEFAULT 0 NOT NULL,
	"d2" integer DEFAULT 0 NOT NULL,
	"d3" integer DEFAULT 0 NOT NULL,
	"d4" integer DEFAULT 0 NOT NULL,
	"d5" integer DEFAULT 0 NOT NULL,
	"d6" integer DEFAULT 0 NOT NULL,
	"d7" integer DEFAULT 0 NOT NULL,
	"d8" integer DEFAULT 0 NOT NULL,
	"d9" integer DEFAULT 0 NOT NULL,
	"d10" integer DEFAULT 0 NOT NULL,
	"d11" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "usage_calls_workspace_id_hour_method_tool_principal_client_outcome_pk" PRIMARY KEY("workspace_id","hour","method","tool","principal","client","outcome")
);
--> statement-breakpoint
CREATE TABLE "usage_runs" (
	"workspace_id" text NOT NULL,
	"hour" timestamp with time zone NOT NULL,
	"flow" text NOT NULL,
	"started" integer DEFAULT 0 NOT NULL,
	"completed" integer DEFAULT 0 NOT NULL,
	"failed" integer DEFAULT 0 NOT NULL,
	"cancelled" integer DEFAULT 0 NOT NULL,
	"steps" integer DEFAULT 0 NOT NULL,
	"http_calls" integer DEFAULT 0 NOT NULL,
	"llm_tokens" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "usage_runs_workspace_id_hour_flow_pk" PRIMARY KEY("workspace_id","hour","flow")
);
--> statement-breakpoint
CREATE INDEX "usage_batches_applied_idx" ON "usage_batches" USING btree ("applied_at");--> statement-breakpoint
CREATE INDEX "usage_calls_hour_idx" ON "usage_calls" USING btree ("hour");--> statement-breakpoint
CREATE INDEX "usage_runs_hour_idx" ON "usage_runs" USING btree ("hour");