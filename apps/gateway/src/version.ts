/** The server version reported by initialize, /healthz, the server card and server.json. */
export const VERSION = '0.1.0';
