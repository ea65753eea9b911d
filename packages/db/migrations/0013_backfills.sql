CREATE TABLE "backfills" (
	"name" text PRIMARY KEY NOT NULL,
	"rows_filled" integer NOT NULL,
	"completed_at" timestamp with time zone DEFAULT now() NOT NULL
);
