// Offline-first for a page of agrun: registers the service worker (sw.js, beside this module),
// which caches the whole build on the first visit and serves it from the cache after that.
import { AgrunConfigError } from './errors.js';
import { checkOptions, describe } from './options.js';

const WORKER_URL = new URL('./sw.js', import.meta.url).href;

/**
 * Register agrun's service worker. The page that registers it is still served from the
 * network; the next visit, online or not, is served from the cache.
 * @param {import('./offline').OfflineOptions} [options]
 * @returns {Promise<ServiceWorkerRegistration | null>} null where service workers are not
 *   available (an insecure context, a browser without them, registration refused): the page
 *   goes on working online. Rejects only for options that are not `{ scope?: string }`.
 */
export async function registerOffline(options = {}) {
  const { scope } = checkOptions('registerOffline', options, { scope: 'string' });
  if (scope !== undefined && !scope.trim()) {
    throw new AgrunConfigError(`registerOffline: option 'scope' must be a URL path, got ${describe(scope)}`);
  }
  try {
    // Reading navigator.serviceWorker itself throws where storage is denied (a sandboxed frame).
    const container = globalThis.navigator?.serviceWorker;
    if (!container || globalThis.isSecureContext === false) return null;
    // A browser that blocks workers (an automation switch, a policy) may resolve to nothing.
    return (await container.register(WORKER_URL, scope === undefined ? undefined : { scope })) ?? null;
  } catch (error) {
    console.warn('agrun: the service worker could not be registered, so this page works online only:', error);
    return null;
  }
}
