// The SDK (and the context manager it is given) behind a module of our own, imported lazily by index.ts. A dynamic
// import of the CommonJS package itself gives a bundle (scripts/build-dist.ts, code splitting) a namespace with only
// `default`; a static import here is converted with its named exports.
export { NodeSDK } from '@opentelemetry/sdk-node';
export { ScopedContextManager } from './context-manager.js';
export { otlpProtobufSpanProcessor, wantsOtlpProtobufTraces } from './otlp-exporter.js';
