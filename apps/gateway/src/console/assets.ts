import { ASSET_HASHES } from './asset-hashes.generated.js';
import { CSS, JS } from './asset-sources.js';

/** An asset served under its content hash, so browsers may cache it forever. */
export interface HashedAsset {
  path: string;
  body: string;
}

export const STYLESHEET: HashedAsset = { path: `/console/assets/console.${ASSET_HASHES.css}.css`, body: CSS };
export const SCRIPT: HashedAsset = { path: `/console/assets/console.${ASSET_HASHES.js}.js`, body: JS };
