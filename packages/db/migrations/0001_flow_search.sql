-- Trigram search (pg_trgm) on a GIN index that also holds workspace_id and source (btree_gin), so a rare term is
-- found without reading other workspaces. Both extensions are trusted in Postgres 13+ and bundled with PGlite.
CREATE EXTENSION IF NOT EXISTS pg_trgm;--> statement-breakpoint
CREATE EXTENSION IF NOT EXISTS btree_gin;--> statement-breakpoint
CREATE TABLE "flow_version_tools" (
	"workspace_id" text NOT NULL,
	"flow_id" text NOT NULL,
	"version" integer NOT NULL,
	"tool_name" text NOT NULL,
	"invocation" text NOT NULL,
	"search_text" text NOT NULL,
	"title" text,
	"description" text,
	"flow_name" text,
	CONSTRAINT "flow_version_tools_flow_id_version_tool_name_pk" PRIMARY KEY("flow_id","version","tool_name")
);
--> statement-breakpoint
ALTER TABLE "flow_tools" ADD COLUMN "version" integer;--> statement-breakpoint
ALTER TABLE "flow_tools" ADD COLUMN "title" text;--> statement-breakpoint
ALTER TABLE "flow_tools" ADD COLUMN "description" text;--> statement-breakpoint
ALTER TABLE "flow_tools" ADD COLUMN "flow_name" text;--> statement-breakpoint
ALTER TABLE "flow_versions" ADD COLUMN "is_public" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "flows" ADD COLUMN "search_text" text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE "flow_version_tools" ADD CONSTRAINT "flow_version_tools_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "flow_version_tools" ADD CONSTRAINT "flow_version_tools_flow_id_flows_id_fk" FOREIGN KEY ("flow_id") REFERENCES "public"."flows"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "flow_tools_ws_key_idx" ON "flow_tools" USING btree ("workspace_id",(lower("tool_name") collate "C"),("flow_slug" collate "C"),"source",("tool_name" collate "C"));--> statement-breakpoint
CREATE INDEX "flow_tools_search_idx" ON "flow_tools" USING gin ("workspace_id","source","search_text" gin_trgm_ops) WITH (fastupdate=false);--> statement-breakpoint
CREATE INDEX "flows_ws_slug_c_idx" ON "flows" USING btree ("workspace_id",("slug" collate "C"));--> statement-breakpoint
CREATE INDEX "flows_search_idx" ON "flows" USING gin ("workspace_id","search_text" gin_trgm_ops) WITH (fastupdate=false);