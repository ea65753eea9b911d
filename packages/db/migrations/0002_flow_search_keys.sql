DROP INDEX "flows_ws_slug_c_idx";--> statement-breakpoint
DROP INDEX "flow_tools_search_idx";--> statement-breakpoint
CREATE INDEX "flows_ws_slug_key_idx" ON "flows" USING btree ("workspace_id",(lower("slug") collate "C"),("slug" collate "C"));--> statement-breakpoint
CREATE INDEX "flow_tools_search_idx" ON "flow_tools" USING gin ("workspace_id","search_text" gin_trgm_ops) WITH (fastupdate=false);