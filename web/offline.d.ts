// Types of agrun's offline module (web/offline.js), which registers its service worker
// (web/sw.js: the whole build cached on the first visit, served from the cache after).

export interface OfflineOptions {
  /** The URL path the worker serves (default: the folder of offline.js and sw.js). */
  scope?: string;
}

/**
 * Register agrun's service worker. The page that registers it stays on the network; later
 * visits, online or offline, are served from the cache of one build, each file checked
 * against its sha256 when first served (a damaged one is fetched again; offline, a script
 * gets a module throwing AgrunBootError code 'boot_failed', another file an HTTP 503).
 * Resolves to null where service workers are unavailable (an insecure context, a browser
 * without them, registration refused): the page still works online. Rejects with an
 * AgrunConfigError only for options other than `{ scope?: string }`.
 */
export declare function registerOffline(options?: OfflineOptions): Promise<ServiceWorkerRegistration | null>;
