/** The `flowgate://` URIs of flow resources. An installed flow is addressed with `?installation_id=`. */

function withInstallation(uri: string, installationId: string | null): string {
  return installationId === null ? uri : `${uri}?installation_id=${encodeURIComponent(installationId)}`;
}

const seg = encodeURIComponent;

export function flowUri(slug: string, installationId: string | null = null): string {
  return withInstallation(`flowgate://flows/${seg(slug)}`, installationId);
}

export function flowDefinitionUri(
  slug: string,
  source: string,
  installationId: string | null = null,
): string {
  return withInstallation(`flowgate://flows/${seg(slug)}/definition/${seg(source)}`, installationId);
}

export function flowVersionUri(slug: string, version: number, installationId: string | null = null): string {
  return withInstallation(`flowgate://flows/${seg(slug)}/versions/${version}/definition`, installationId);
}

export function flowToolUri(slug: string, toolName: string, installationId: string | null = null): string {
  return withInstallation(`flowgate://flows/${seg(slug)}/mcp-tools/${seg(toolName)}`, installationId);
}

export function definitionUriFor(def: {
  slug: string;
  version: number | null;
  installationId: string | null;
}): string {
  return def.version === null
    ? flowDefinitionUri(def.slug, 'draft', def.installationId)
    : flowVersionUri(def.slug, def.version, def.installationId);
}

export function runUri(runId: string): string {
  return `flowgate://runs/${seg(runId)}`;
}

export function runResultUri(runId: string): string {
  return `flowgate://runs/${seg(runId)}/result`;
}

export function runEventsUri(runId: string): string {
  return `flowgate://runs/${seg(runId)}/events`;
}
