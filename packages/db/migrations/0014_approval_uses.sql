CREATE TABLE "approval_uses" (
	"workspace_id" text NOT NULL,
	"state_sha256" text NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"used_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "approval_uses_workspace_id_state_sha256_pk" PRIMARY KEY("workspace_id","state_sha256")
);
--> statement-breakpoint
ALTER TABLE "approval_uses" ADD CONSTRAINT "approval_uses_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "approval_uses_expires_idx" ON "approval_uses" USING btree ("workspace_id","expires_at");