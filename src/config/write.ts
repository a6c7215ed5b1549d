/** Commented TOML for config.toml and app.toml, from the schema tables. */
import { APP_CONFIG_SPEC, type AppConfig } from './app-config.js';
import { NODE_CONFIG_SPEC, type NodeConfig } from './node-config.js';
import { renderToml } from './schema.js';

export function renderConfigToml(config: NodeConfig): string {
  return renderToml(NODE_CONFIG_SPEC, config as unknown as Record<string, unknown>);
}

export function renderAppToml(appConfig: AppConfig): string {
  return renderToml(APP_CONFIG_SPEC, appConfig as unknown as Record<string, unknown>);
}
