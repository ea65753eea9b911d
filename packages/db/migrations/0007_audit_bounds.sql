ALTER TABLE "audit_entries" ADD COLUMN "count" integer DEFAULT 1 NOT NULL;--> statement-breakpoint
CREATE INDEX "audit_at_idx" ON "audit_entries" USING btree ("at");