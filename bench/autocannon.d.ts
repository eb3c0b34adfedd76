// Minimal types for the parts of autocannon (no @types package) that the bench uses.
declare module 'autocannon' {
  export interface Histogram {
    average: number;
    mean: number;
    stddev: number;
    min: number;
    max: number;
    p50: number;
    p90: number;
    p99: number;
    total: number;
  }
  export interface Result {
    requests: Histogram;
    latency: Histogram;
    throughput: Histogram;
    errors: number;
    timeouts: number;
    non2xx: number;
    duration: number;
    '2xx': number;
    '4xx': number;
    '5xx': number;
    statusCodeStats: Record<string, { count: number }>;
  }
  export interface Options {
    url: string;
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    connections?: number;
    duration?: number;
    amount?: number;
    /** Requests per second across all connections (a fixed offered load, for latency at a given rate). */
    overallRate?: number;
    timeout?: number;
    /** Per-request hooks; setupRequest may return a changed request (e.g. a new body). */
    requests?: Array<{
      setupRequest?: (request: { body?: string; path?: string; [k: string]: unknown }) => {
        body?: string;
        path?: string;
        [k: string]: unknown;
      };
    }>;
  }
  function autocannon(options: Options): Promise<Result>;
  export default autocannon;
}
