// The words the conversation shows, in one table: a person's view of the chat controller's
// states, parts and error kinds (web/widget/chat-errors.js).

// The words the widget shows, in one table per language: the shell, the conversation (a
// person's view of the chat controller's states, parts and error kinds, chat-errors.js), the
// panels, the boot progress and the provider messages. <agrun-chat lang> picks a table
// (wordsFor); every table has exactly English's keys (e2e/test_widget_words.py checks).
// A word that takes values is a function of them.

const mb = (bytes) => (bytes / 1e6).toFixed(1);

const EN = {
  edit: 'Edit',
  retry: 'Retry',
  copy: 'Copy',
  copyCode: 'Copy code',
  regenerate: 'Regenerate',
  details: 'Details',
  copied: 'Copied.',
  copyFailed: 'Could not copy: the browser refused the clipboard.',
  yourMessage: 'You said',
  answer: 'Answer',
  notSent: 'Not sent.',
  noAnswer: 'No answer:',
  stoppedBefore: 'Stopped before the answer.',
  stopped: 'Stopped: the answer is cut short.',
  failedAnswer: 'The answer broke off.',
  cannotRetry: 'Sending it again will not help.',
  editing: 'Editing your message: Enter sends it as a new message at the end; Escape cancels.',
  editCancelled: 'Editing cancelled.',
  busy: 'Wait for the answer, or stop it.',
  tool: 'Tool',
  toolRunning: 'running…',
  toolDone: 'done',
  toolFailed: 'failed',
  arguments: 'Arguments',
  result: 'Result',
  error: 'Error',
  retrieved: 'Read stored content',
  retrievedMissing: 'not found',
  question: 'agrun asks',
  errors: {
    unavailable: 'The model could not be reached.',
    timeout: 'The model took too long to answer.',
    rate_limited: 'The model is taking too many requests: try again in a moment.',
    cut: 'The connection to the model broke mid-answer.',
    model_failed: 'The model failed.',
    bad_reply: 'The model’s reply could not be read.',
    too_long: 'The answer grew longer than allowed.',
    too_big: 'That is more than this model can take in: shorten it.',
    auth: 'The model refused the key: check the API key in Settings.',
    not_found: 'The model or its address was not found: check Settings.',
    refused: 'The model refused the request.',
    tool_failed: 'A tool call went wrong.',
    skill_failed: 'A skill failed.',
    gave_up: 'agrun gave up after too many steps.',
    stopped_working: 'agrun stopped working: reload the page.',
    storage: 'The conversation could not be saved.',
    other: 'Something went wrong.',
  },

  // The shell (template.js)
  loading: 'Loading agrun…',
  panels: 'Panels',
  memory: 'Memory',
  why: 'Why',
  whyTitle: 'Why this answer',
  settings: 'Settings',
  settingsTitle: 'Model settings',
  close: 'Close',
  closePanel: (title) => `Close ${title.toLowerCase()}`,
  conversation: 'Conversation',
  message: 'Message',
  placeholder: 'Say something',
  send: 'Send',
  stop: 'Stop',
  hint: 'Enter sends, Shift+Enter starts a new line.',
  // Status, progress and announcements (controller.js, progress.js)
  ready: 'Ready',
  answering: 'Answering…',
  starting: 'agrun is starting…',
  restarting: 'agrun is starting again',
  couldNotStart: (why) => `agrun could not start: ${why}`,
  changeKept: (why) => `That change did not work (${why}); answers still come from before.`,
  stages: {
    script: 'Loading agrun',
    pyodide: 'Starting Python',
    packages: 'Loading packages',
    runtime: 'Starting the runtime',
  },
  ofCount: (loaded, total) => `${loaded} of ${total}`,
  downloading: (loaded, total) => `Downloading the model: ${total
    ? `${mb(loaded)} of ${mb(total)} MB (${Math.floor((loaded / total) * 100)}%)` : `${mb(loaded)} MB`}`,
  forgot: (text) => `Forgot “${text}”.`,
  forgetFailed: (text, why) => `Could not forget “${text}”: ${why}`,
  globalOn: 'Global memory is on.',
  globalOff: 'Global memory is off.',
  answersNow: (source) => `Answers now come from ${source}.`,
  didNotWork: (why) => `That did not work: ${why}`,
  savingBack: 'Saving works again.',
  savingStopped: (reason) => `Saving has stopped${reason ? ` (${reason})` : ''}: this conversation goes on, `
    + 'but what is said from now on will not survive a reload.',
  // The empty conversation (controller.js)
  emptyWithModel: (source) => `Answers come from ${source}. Say something to start.`,
  emptyEcho: 'No model is connected: agrun repeats what you say (echo) and runs its skills. '
    + 'To have a model answer, choose one in Settings.',
  useBundled: 'Use the model that comes with this page',
  // Where answers come from (provider.js)
  sources: {
    page: "the page's model",
    none: 'no model (skills only)',
    'in-page': 'the in-page model',
    local: (url) => `the server at ${url}`,
    hosted: (url) => `the API at ${url}`,
  },
  needModelUrl: 'the in-page model needs the URL of its GGUF file',
  modelUnreachable: (url, why) => `the model file at ${url} could not be fetched (${why})`,
  noModelFile: (url, status) => `there is no model file at ${url} (HTTP ${status})`,
  notGguf: (url, head) => `${url} is not a GGUF model file (it starts "${head}")`,
  notUrl: (url) => `“${url}” is not a URL: write it as http://host:port/v1`,
  nothingAnswers: (url) => `nothing answers at ${url}: is the server running, and is the address right?`,
  keyRefused: (url, status) => `the server at ${url} refused the API key (HTTP ${status})`,
  keyNeeded: (url, status) => `the server at ${url} refused to answer without an API key (HTTP ${status})`,
  // The settings panel (settings-panel.js)
  choices: {
    page: "This page's own model",
    none: 'No model: skills only (echo)',
    'in-page': 'A model running in this page',
    local: 'A local server (OpenAI-compatible)',
    hosted: 'A hosted API',
  },
  answersFrom: 'Answers come from',
  modelFileUrl: 'Model file (GGUF) URL',
  serverUrl: 'Server URL',
  modelNameOptional: 'Model name (optional)',
  apiUrl: 'API URL',
  modelName: 'Model name',
  apiKey: 'API key',
  keyHeld: 'A key is set (kept in memory only)',
  keyNote: 'The key is kept in this page’s memory only: it is never stored, so a reload asks for it again.',
  apply: 'Apply',
  applying: 'Applying…',
  giveModelUrl: 'Give the URL of the model file.',
  giveServerUrl: 'Give the server URL, starting with http:// or https://.',
  giveApiUrl: 'Give the API URL, starting with https://.',
  giveKey: 'Give the API key.',
  // The memory panel (memory-panel.js)
  thisSession: 'This session',
  groups: { facts: 'Facts', preferences: 'Preferences', decisions: 'Decisions' },
  noneYet: { facts: 'No facts yet.', preferences: 'No preferences yet.', decisions: 'No decisions yet.' },
  globalMemory: 'Global memory',
  globalShared: 'Shared by every conversation in this browser.',
  useGlobal: 'Use global memory',
  globalIsOff: 'Global memory is off: it is neither read nor written. What it holds stays stored.',
  globalEmpty: 'Nothing in global memory.',
  globalEntries: 'Global memory entries',
  forget: 'Forget',
  forgetEntry: (text) => `Forget “${text}”`,
  // The why panel (why-panel.js)
  whyPanel: {
    noPack: 'No model was asked for the last answer: it came from a skill, so there is no context pack to show.',
    madeFrom: (entries, used, limit) => `The last answer was made from ${entries} ${entries === 1 ? 'entry' : 'entries'}, `
      + `${used} of ${limit} tokens.`,
    emptyLayers: (names) => `Empty layers: ${names}.`,
    leftOut: 'Left out',
    nothingLeftOut: 'Nothing was left out.',
    extension: (name) => `${name} (extension)`,
    shortened: 'shortened',
    from: (sources) => `from ${sources}`,
    dropped: (n, kind) => `${n} ${n === 1 ? kind : `${kind}s`}`,
    layers: {
      L0: 'live: instructions and the conversation',
      L1: 'stage: artifacts and approvals',
      L2: 'session: memory and summary',
      L3: 'project: durable memory',
      L4: 'archive',
    },
    reasons: {
      over_budget: 'did not fit the token budget',
      duplicate: 'repeated something already in the pack',
      superseded: 'replaced by a newer version',
      invalid_artifact: 'an artifact that did not validate',
      orphan_tool_result: 'a tool result without its call',
      orphan_reply: 'a reply whose question was left out',
      layer_not_requested: 'its layer was not asked for',
      moved_to_l3: 'merged into project memory (L3)',
      before_cursor: 'already seen before this turn',
    },
  },
};
const mbEs = (bytes) => mb(bytes).replace('.', ',');
// "de" before a source: "de el" contracts to "del".
const deEs = (source) => (source.startsWith('el ') ? `del ${source.slice(3)}` : `de ${source}`);

const ES = {
  edit: 'Editar',
  retry: 'Reintentar',
  copy: 'Copiar',
  copyCode: 'Copiar el código',
  regenerate: 'Volver a generar',
  details: 'Detalles',
  copied: 'Copiado.',
  copyFailed: 'No se pudo copiar: el navegador denegó el acceso al portapapeles.',
  yourMessage: 'Tu mensaje',
  answer: 'Respuesta',
  notSent: 'No enviado.',
  noAnswer: 'Sin respuesta:',
  stoppedBefore: 'Detenido antes de la respuesta.',
  stopped: 'Detenido: la respuesta quedó incompleta.',
  failedAnswer: 'La respuesta se interrumpió.',
  cannotRetry: 'Volver a enviarlo no servirá de nada.',
  editing: 'Editando tu mensaje: Intro lo envía como un mensaje nuevo al final; Escape cancela.',
  editCancelled: 'Edición cancelada.',
  busy: 'Espera a la respuesta o detenla.',
  tool: 'Herramienta',
  toolRunning: 'en curso…',
  toolDone: 'hecho',
  toolFailed: 'falló',
  arguments: 'Argumentos',
  result: 'Resultado',
  error: 'Error',
  retrieved: 'Lectura de contenido guardado',
  retrievedMissing: 'no encontrado',
  question: 'agrun pregunta',
  errors: {
    unavailable: 'No se pudo contactar con el modelo.',
    timeout: 'El modelo tardó demasiado en responder.',
    rate_limited: 'El modelo está recibiendo demasiadas peticiones: inténtalo de nuevo en un momento.',
    cut: 'La conexión con el modelo se cortó a mitad de la respuesta.',
    model_failed: 'El modelo falló.',
    bad_reply: 'No se pudo leer la respuesta del modelo.',
    too_long: 'La respuesta superó la longitud permitida.',
    too_big: 'Es más de lo que este modelo puede procesar: acórtalo.',
    auth: 'El modelo rechazó la clave: revisa la clave de API en Ajustes.',
    not_found: 'No se encontró el modelo o su dirección: revisa los Ajustes.',
    refused: 'El modelo rechazó la petición.',
    tool_failed: 'Una llamada a una herramienta salió mal.',
    skill_failed: 'Una habilidad falló.',
    gave_up: 'agrun se rindió tras demasiados pasos.',
    stopped_working: 'agrun dejó de funcionar: recarga la página.',
    storage: 'No se pudo guardar la conversación.',
    other: 'Algo salió mal.',
  },
  loading: 'Cargando agrun…',
  panels: 'Paneles',
  memory: 'Memoria',
  why: 'Por qué',
  whyTitle: 'Por qué esta respuesta',
  settings: 'Ajustes',
  settingsTitle: 'Ajustes del modelo',
  close: 'Cerrar',
  closePanel: (title) => `Cerrar el panel ${title}`,
  conversation: 'Conversación',
  message: 'Mensaje',
  placeholder: 'Escribe algo',
  send: 'Enviar',
  stop: 'Detener',
  hint: 'Intro envía; Mayús+Intro empieza una línea nueva.',
  ready: 'Listo',
  answering: 'Respondiendo…',
  starting: 'agrun se está iniciando…',
  restarting: 'agrun se está reiniciando',
  couldNotStart: (why) => `agrun no pudo iniciarse: ${why}`,
  changeKept: (why) => `Ese cambio no funcionó (${why}); las respuestas siguen viniendo de donde venían.`,
  stages: {
    script: 'Cargando agrun',
    pyodide: 'Iniciando Python',
    packages: 'Cargando paquetes',
    runtime: 'Iniciando el entorno de ejecución',
  },
  ofCount: (loaded, total) => `${loaded} de ${total}`,
  downloading: (loaded, total) => `Descargando el modelo: ${total
    ? `${mbEs(loaded)} de ${mbEs(total)} MB (${Math.floor((loaded / total) * 100)} %)` : `${mbEs(loaded)} MB`}`,
  forgot: (text) => `Olvidado: “${text}”.`,
  forgetFailed: (text, why) => `No se pudo olvidar “${text}”: ${why}`,
  globalOn: 'La memoria global está activada.',
  globalOff: 'La memoria global está desactivada.',
  answersNow: (source) => `Ahora las respuestas vienen ${deEs(source)}.`,
  didNotWork: (why) => `No funcionó: ${why}`,
  savingBack: 'El guardado vuelve a funcionar.',
  savingStopped: (reason) => `El guardado se ha detenido${reason ? ` (${reason})` : ''}: esta conversación sigue, `
    + 'pero lo que se diga a partir de ahora no sobrevivirá a una recarga.',
  emptyWithModel: (source) => `Las respuestas vienen ${deEs(source)}. Escribe algo para empezar.`,
  emptyEcho: 'No hay ningún modelo conectado: agrun repite lo que dices (eco) y ejecuta sus habilidades. '
    + 'Para que responda un modelo, elige uno en Ajustes.',
  useBundled: 'Usar el modelo que viene con esta página',
  sources: {
    page: 'el modelo propio de la página',
    none: 'ningún modelo (solo habilidades)',
    'in-page': 'el modelo que se ejecuta en la página',
    local: (url) => `el servidor en ${url}`,
    hosted: (url) => `la API en ${url}`,
  },
  needModelUrl: 'el modelo de la página necesita la URL de su archivo GGUF',
  modelUnreachable: (url, why) => `no se pudo descargar el archivo del modelo en ${url} (${why})`,
  noModelFile: (url, status) => `no hay ningún archivo de modelo en ${url} (HTTP ${status})`,
  notGguf: (url, head) => `${url} no es un archivo de modelo GGUF (empieza por "${head}")`,
  notUrl: (url) => `“${url}” no es una URL: escríbela como http://host:puerto/v1`,
  nothingAnswers: (url) => `nada responde en ${url}: ¿está en marcha el servidor y es correcta la dirección?`,
  keyRefused: (url, status) => `el servidor en ${url} rechazó la clave de API (HTTP ${status})`,
  keyNeeded: (url, status) => `el servidor en ${url} se negó a responder sin una clave de API (HTTP ${status})`,
  choices: {
    page: 'El modelo propio de esta página',
    none: 'Ningún modelo: solo habilidades (eco)',
    'in-page': 'Un modelo que se ejecuta en esta página',
    local: 'Un servidor local (compatible con OpenAI)',
    hosted: 'Una API alojada',
  },
  answersFrom: 'Las respuestas vienen de',
  modelFileUrl: 'URL del archivo del modelo (GGUF)',
  serverUrl: 'URL del servidor',
  modelNameOptional: 'Nombre del modelo (opcional)',
  apiUrl: 'URL de la API',
  modelName: 'Nombre del modelo',
  apiKey: 'Clave de API',
  keyHeld: 'Ya hay una clave (guardada solo en memoria)',
  keyNote: 'La clave se guarda solo en la memoria de esta página: nunca se almacena, así que al recargar se vuelve a pedir.',
  apply: 'Aplicar',
  applying: 'Aplicando…',
  giveModelUrl: 'Indica la URL del archivo del modelo.',
  giveServerUrl: 'Indica la URL del servidor, empezando por http:// o https://.',
  giveApiUrl: 'Indica la URL de la API, empezando por https://.',
  giveKey: 'Indica la clave de API.',
  thisSession: 'Esta sesión',
  groups: { facts: 'Hechos', preferences: 'Preferencias', decisions: 'Decisiones' },
  noneYet: { facts: 'Aún no hay hechos.', preferences: 'Aún no hay preferencias.', decisions: 'Aún no hay decisiones.' },
  globalMemory: 'Memoria global',
  globalShared: 'Compartida por todas las conversaciones de este navegador.',
  useGlobal: 'Usar la memoria global',
  globalIsOff: 'La memoria global está desactivada: no se lee ni se escribe. Lo que contiene sigue guardado.',
  globalEmpty: 'No hay nada en la memoria global.',
  globalEntries: 'Entradas de la memoria global',
  forget: 'Olvidar',
  forgetEntry: (text) => `Olvidar “${text}”`,
  whyPanel: {
    noPack: 'No se consultó a ningún modelo para la última respuesta: vino de una habilidad, así que no hay paquete de contexto que mostrar.',
    madeFrom: (entries, used, limit) => `La última respuesta se hizo a partir de ${entries} ${entries === 1 ? 'entrada' : 'entradas'}, `
      + `${used} de ${limit} tokens.`,
    emptyLayers: (names) => `Capas vacías: ${names}.`,
    leftOut: 'Lo que quedó fuera',
    nothingLeftOut: 'No quedó nada fuera.',
    extension: (name) => `${name} (extensión)`,
    shortened: 'acortado',
    from: (sources) => `de ${sources}`,
    // The kind is the runtime's own name (message, tool_result…), left as it is.
    dropped: (n, kind) => `${n} × ${kind}`,
    layers: {
      L0: 'en vivo: instrucciones y la conversación',
      L1: 'etapa: artefactos y aprobaciones',
      L2: 'sesión: memoria y resumen',
      L3: 'proyecto: memoria duradera',
      L4: 'archivo',
    },
    reasons: {
      over_budget: 'no cabía en el presupuesto de tokens',
      duplicate: 'repetía algo que ya estaba en el paquete',
      superseded: 'sustituido por una versión más reciente',
      invalid_artifact: 'un artefacto que no se validó',
      orphan_tool_result: 'un resultado de herramienta sin su llamada',
      orphan_reply: 'una respuesta cuya pregunta quedó fuera',
      layer_not_requested: 'no se pidió su capa',
      moved_to_l3: 'fusionado en la memoria del proyecto (L3)',
      before_cursor: 'ya visto antes de este turno',
    },
  },
};

/** The tables by language (its primary subtag): add a language here, with English's keys. */
export const LANGUAGES = { en: EN, es: ES };

/** English: the table a language without its own falls back to. */
export const WORDS = EN;

// Languages written right to left: the widget lays itself out that way for them.
const RIGHT_TO_LEFT = new Set(['ar', 'fa', 'he', 'ur', 'yi']);

/** The primary subtag of a BCP 47 tag (`es-MX` -> `es`), lower case; '' for none. */
export function primaryLanguage(tag) {
  return String(tag ?? '').trim().split(/[-_]/)[0].toLowerCase();
}

/** The table for language `tag` (`es`, `es-MX`), English when there is none. */
export function wordsFor(tag) {
  return LANGUAGES[primaryLanguage(tag)] ?? EN;
}

/** 'rtl' for a language written right to left, else 'ltr'. */
export function directionFor(tag) {
  return RIGHT_TO_LEFT.has(primaryLanguage(tag)) ? 'rtl' : 'ltr';
}

/** A person's sentence for a chat error (its `kind`) in `words`; details stay in `error.message`. */
export function errorSentence(error, words = WORDS) {
  return words.errors[error?.kind] ?? words.errors.other;
}
