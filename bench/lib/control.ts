/**
 * Child side of the benchmark's IPC channel: memory figures (optionally after a full GC), what the garbage collector
 * did during a chosen window (bench/lib/gc.ts), CPU profiles of a chosen window (so start-up and migrations stay out
 * of them) and heap snapshots.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';
import { writeHeapSnapshot } from 'node:v8';
import { z } from 'zod';
import { recordGc } from './gc.js';

const messageSchema = z.object({
  id: z.number(),
  cmd: z.string(),
  args: z.record(z.string(), z.unknown()).default({}),
});

export interface MemoryFigures {
  rss: number;
  heapTotal: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
  gcRan: boolean;
}

/** A command a server adds to the common ones (e.g. the gateway's statement count). */
export type ControlHandler = (args: Record<string, unknown>) => Promise<unknown>;

export function serveControl(extra: Record<string, ControlHandler> = {}): void {
  if (!process.send) return;
  let session: Session | undefined;
  let gcRecording: ReturnType<typeof recordGc> | undefined;
  /** The inspector session of a profile or heap sampling, connected by its start command. */
  const open = () => {
    session ??= new Session();
    session.connect();
    return session;
  };
  /** Reads the running session's result (a stop command), then disconnects it. */
  const finish = async <T>(what: string, read: (running: Session) => Promise<T>): Promise<T> => {
    const current = session;
    if (!current) throw new Error(`no ${what} running`);
    session = undefined;
    try {
      return await read(current);
    } finally {
      current.disconnect();
    }
  };
  /** Writes what a stop command read to `args.dir`; the file's path. */
  const written = (args: Record<string, unknown>, extension: string, content: unknown) => {
    const file = join(z.string().parse(args.dir), `gateway-${process.pid}-${Date.now()}.${extension}`);
    writeFileSync(file, JSON.stringify(content));
    return file;
  };
  const handlers: Record<string, ControlHandler> = {
    ...extra,
    async memory(args) {
      const gc = (globalThis as { gc?: () => void }).gc;
      const gcRan = args.gc === true && typeof gc === 'function';
      if (gcRan) gc?.();
      return { ...process.memoryUsage(), gcRan } satisfies MemoryFigures;
    },
    async 'profile-start'(args) {
      const opened = open();
      await opened.post('Profiler.enable');
      await opened.post('Profiler.setSamplingInterval', {
        interval: z.number().int().positive().default(200).parse(args.intervalUs),
      });
      await opened.post('Profiler.start');
      return {};
    },
    async 'profile-stop'(args) {
      const { profile } = await finish('profile', (r) => r.post('Profiler.stop'));
      return { file: written(args, 'cpuprofile', profile) };
    },
    async 'heap-sample-start'(args) {
      const opened = open();
      await opened.post('HeapProfiler.enable');
      await opened.post('HeapProfiler.startSampling', {
        samplingInterval: z.number().int().positive().default(4096).parse(args.intervalBytes),
        includeObjectsCollectedByMajorGC: args.major === true,
        includeObjectsCollectedByMinorGC: args.minor === true,
      });
      return {};
    },
    async 'heap-sample-stop'(args) {
      const { profile } = await finish('heap sampling', (r) => r.post('HeapProfiler.stopSampling'));
      return { file: written(args, 'heapprofile', profile) };
    },
    async 'gc-start'() {
      gcRecording = recordGc();
      return {};
    },
    async 'gc-stop'() {
      if (!gcRecording) throw new Error('no GC recording running');
      const figures = gcRecording.stop();
      gcRecording = undefined;
      return figures;
    },
    async 'heap-snapshot'(args) {
      return {
        file: writeHeapSnapshot(
          join(z.string().parse(args.dir), `gateway-${process.pid}-${Date.now()}.heapsnapshot`),
        ),
      };
    },
  };
  process.on('message', (raw) => {
    const parsed = messageSchema.safeParse(raw);
    if (!parsed.success) return;
    const { id, cmd, args } = parsed.data;
    const handler = handlers[cmd];
    const reply = (body: Record<string, unknown>) => process.send?.({ id, ...body });
    if (!handler) {
      reply({ ok: false, error: `unknown command ${cmd}` });
      return;
    }
    handler(args).then(
      (result) => reply({ ok: true, result }),
      (err: unknown) => reply({ ok: false, error: err instanceof Error ? err.message : String(err) }),
    );
  });
  // The channel must not keep the process alive after a graceful close.
  process.channel?.unref();
}
