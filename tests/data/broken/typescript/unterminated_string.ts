import { readFileSync } from "node:fs";

export interface Config {
  port: number;
  host: string;
  debug: boolean;
}

const DEFAULTS: Config = { port: 8080, host: "127.0.0.1", debug: false };
const ENV_PREFIX = "APP_;

function fromEnv(env: NodeJS.ProcessEnv): Partial<Config> {
  const config: Partial<Config> = {};
  if (env[`${ENV_PREFIX}PORT`]) config.port = Number(env[`${ENV_PREFIX}PORT`]);
  if (env[`${ENV_PREFIX}HOST`]) config.host = env[`${ENV_PREFIX}HOST`];
  if (env[`${ENV_PREFIX}DEBUG`]) config.debug = env[`${ENV_PREFIX}DEBUG`] === "1";
  return config;
}

export function loadConfig(path?: string): Config {
  let fromFile: Partial<Config> = {};
  if (path) {
    fromFile = JSON.parse(readFileSync(path, "utf8")) as Partial<Config>;
  }
  const config = { ...DEFAULTS, ...fromFile, ...fromEnv(process.env) };
  if (!Number.isInteger(config.port) || config.port <= 0) {
    throw new Error(`invalid port: ${config.port}`);
  }
  return config;
}
