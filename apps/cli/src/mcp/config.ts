/** Moved to @flowgate/client-config (the gateway's console renders the same configs); kept so CLI imports stay put. */
export * from '@flowgate/client-config';
