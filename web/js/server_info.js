// The header facts both pages show: the model name from GET /props and, when the model has
// synthetic (random) weights, a notice that stays visible so nobody mistakes its noise for
// answers. While the server is unreachable or still loading, it retries and says so.

import { fetchProps } from './api.js';

const RETRY_MS = 3000;
const baseTitle = document.title;

// Resolves with the props object once /props answered. getApiKey() is read on every try, so a
// key entered in the settings after a 401 is used by the next retry.
export async function showServerInfo(getApiKey) {
  const nameEl = document.getElementById('model-name');
  const notice = document.getElementById('synthetic-notice');
  const noticeText = document.getElementById('synthetic-text');
  const errorEl = document.getElementById('server-error');
  for (;;) {
    try {
      const props = await fetchProps(getApiKey());
      const model = typeof props.model === 'string' && props.model ? props.model : 'unknown';
      nameEl.textContent = model;
      nameEl.title = [
        props.version ? `brisk ${props.version}` : '',
        Number.isFinite(props.max_model_len) ? `context ${props.max_model_len}` : '',
        props.batch && props.batch.policy ? `batch policy ${props.batch.policy}` : '',
        props.batch && Number.isFinite(props.batch.max_num_seqs) ?
            `max_num_seqs ${props.batch.max_num_seqs}` : '',
      ].filter(Boolean).join(', ');
      document.title = `${baseTitle} · ${model}`;
      if (props.synthetic === true) {
        noticeText.textContent = `${model} has random (synthetic) weights: its text is ` +
            'meaningless noise. Speeds and timings are real.';
        notice.hidden = false;
      } else {
        notice.hidden = true;
      }
      errorEl.hidden = true;
      return props;
    } catch (e) {
      nameEl.textContent = 'unavailable';
      errorEl.textContent = e.status === 401 ?
          'The server needs an API key: enter it in Settings.' :
          `Cannot read the server's settings (/props): ${e.message}. Retrying…`;
      errorEl.hidden = false;
      await new Promise((r) => setTimeout(r, RETRY_MS));
    }
  }
}
