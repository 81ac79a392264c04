// Offline-first by default (issue 23.7): a page showing <agrun-chat> registers agrun's
// service worker (../offline.js, ../sw.js), so its next visit boots, shows the conversation
// and answers with the in-page model (once downloaded) with the network off. A page opts out
// with offline="off" on the element.
const OFFLINE_URL = new URL('../offline.js', import.meta.url).href;

let registering = null;

/** Whether `element` leaves the page offline-first (it does unless `offline="off"`). */
export function offlineWanted(element) {
  return element.getAttribute('offline') !== 'off';
}

/**
 * Register the service worker once per page for an element that does not opt out, after its
 * runtime is ready (or could not be made): the worker's precache of the build then does not
 * compete with the boot for the network. Resolves to the registration, or null (opted out,
 * no service workers here, refused: the page works online as before).
 * @param {HTMLElement & { ready: Promise<unknown> }} element
 */
export function offerOffline(element) {
  if (!offlineWanted(element)) return Promise.resolve(null);
  registering ??= element.ready
    .catch(() => {})
    .then(() => import(OFFLINE_URL))
    .then(({ registerOffline }) => registerOffline())
    .catch(() => null);
  return registering;
}
