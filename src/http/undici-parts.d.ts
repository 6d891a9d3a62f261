// Types for the two parts of undici the wrapper loads (src/http/undici.ts). Its index would load everything else
// too (fetch, WebSocket, caches, mocks): 13 MB more peak memory and a slower first request in classic mode.

declare module 'undici/lib/dispatcher/agent.js' {
  import type { Agent } from 'undici';
  const AgentClass: typeof Agent;
  export default AgentClass;
}

declare module 'undici/lib/api/api-request.js' {
  import type { Dispatcher } from 'undici';
  /** A Dispatcher method: call it with the dispatcher as `this`. */
  function request(this: Dispatcher, options: Dispatcher.RequestOptions): Promise<Dispatcher.ResponseData>;
  export default request;
}
