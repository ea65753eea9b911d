import type { Check } from './report.js';

export interface BenchOptions {
  /** Interleaved rounds per contender. */
  rounds: number;
  /** Seconds per measured run. */
  durationS: number;
  /** Seconds of warm-up per contender before the rounds. */
  warmupS: number;
  connections: number;
  /** Requests for the memory-flatness run. */
  rssRequests: number;
  /** Also take a CPU profile of the candidate under load (load window only) and print its top frames. */
  profile: boolean;
  profileDurationS: number;
  /**
   * One short round of each benchmark on a small data set: proves every benchmark still runs (CI) while its
   * figures stay informational.
   */
  quick: boolean;
  /** Also print query plans and other detail (e.g. `EXPLAIN` of each search query kind). */
  verbose: boolean;
  /** Minutes of the soak benchmark per driver. */
  soakMinutes: number;
}

export interface Benchmark {
  name: string;
  description: string;
  run(options: BenchOptions): Promise<Check[]>;
}
