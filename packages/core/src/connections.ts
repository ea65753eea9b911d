/** What a connection is: the kinds a flow's `:requires` slot may ask for (docs/flows.md) and an admin may create. */
export const CONNECTION_TYPES = ['http-api', 'llm-provider', 'mcp-server', 'secret'] as const;
export type ConnectionType = (typeof CONNECTION_TYPES)[number];
