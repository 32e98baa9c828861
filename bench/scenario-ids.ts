/**
 * Every bench scenario, in the order a full run takes them. `auth-get-redis` needs a Redis
 * (LANEGATE_BENCH_REDIS_URL, default redis://127.0.0.1:6379).
 */
export const SCENARIO_IDS = ['auth-get', 'auth-get-redis', 'external-auth', 'workers', 'live-proxy', 'proxy-service', 'proxy-mirror', 'transform', 'cache', 'token', 'flood-429', 'latency-c1', 'tls', 'memory', 'websocket', 'config-push'] as const
export type ScenarioId = typeof SCENARIO_IDS[number]
