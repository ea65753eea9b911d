CREATE TABLE "workspace_quota_counters" (
	"workspace_id" text NOT NULL,
	"quota" text NOT NULL,
	"period_start" timestamp with time zone NOT NULL,
	"used" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "workspace_quota_counters_workspace_id_quota_period_start_pk" PRIMARY KEY("workspace_id","quota","period_start")
);
--> statement-breakpoint
ALTER TABLE "workspace_mcp_policies" ADD COLUMN "quota_runs_per_month" integer;--> statement-breakpoint
ALTER TABLE "workspace_mcp_policies" ADD COLUMN "quota_llm_tokens_per_month" bigint;--> statement-breakpoint
ALTER TABLE "workspace_mcp_policies" ADD COLUMN "quota_tool_calls_per_day" integer;--> statement-breakpoint
ALTER TABLE "workspace_quota_counters" ADD CONSTRAINT "workspace_quota_counters_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;