ALTER TABLE "flows" RENAME COLUMN "trusted_literal_sha256" TO "trusted_metadata_sha256";--> statement-breakpoint
ALTER TABLE "installations" RENAME COLUMN "trusted_literal_sha256" TO "trusted_metadata_sha256";--> statement-breakpoint
ALTER TABLE "flow_versions" ADD COLUMN "metadata_sha256" text;