ALTER TABLE "flows" ADD COLUMN "trusted_literal_sha256" text;--> statement-breakpoint
ALTER TABLE "installations" ADD COLUMN "trusted_literal_sha256" text;