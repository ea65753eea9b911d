ALTER TABLE "audit_entries" ADD COLUMN "error_code" text;--> statement-breakpoint
ALTER TABLE "audit_entries" ADD COLUMN "protocol_version" text;--> statement-breakpoint
ALTER TABLE "flow_versions" ADD COLUMN "literal_sha256" text;--> statement-breakpoint
UPDATE "flow_versions" SET "literal_sha256" = encode(sha256(convert_to("literal", 'UTF8')), 'hex');--> statement-breakpoint
ALTER TABLE "flow_versions" ALTER COLUMN "literal_sha256" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "flow_versions" ADD COLUMN "summary" jsonb;
