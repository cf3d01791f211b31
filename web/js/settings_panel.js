// The settings panel: shows the stored settings, validates every edit and saves the valid ones
// at once (there is no "save" button to forget). An invalid field is marked and keeps its last
// valid value in the stored settings, so a half-typed number never reaches a request.

import { DEFAULT_SETTINGS, loadSettings, saveSettings, validateSetting } from './store.js';

export class SettingsPanel {
  // onChange(settings) runs after every successful save.
  constructor(onChange) {
    this.onChange = onChange;
    this.panel = document.getElementById('settings-panel');
    this.toggle = document.getElementById('settings-toggle');
    this.form = document.getElementById('settings-form');
    this.errorEl = document.getElementById('settings-error');
    this.settings = loadSettings();
    this.fields = {};
    for (const key of Object.keys(DEFAULT_SETTINGS)) {
      const field = document.getElementById(`setting-${key}`);
      if (!field) continue;
      this.fields[key] = field;
      field.value = this.settings[key];
      field.addEventListener('input', () => this.edited(key));
      field.addEventListener('change', () => this.edited(key));
    }
    this.toggle.addEventListener('click', () => this.setOpen(this.panel.hidden));
    const close = document.getElementById('settings-close');
    if (close) close.addEventListener('click', () => this.setOpen(false));
    document.getElementById('settings-reset').addEventListener('click', () => this.reset());
    this.form.addEventListener('submit', (e) => e.preventDefault());
  }

  setOpen(open) {
    this.panel.hidden = !open;
    this.toggle.setAttribute('aria-expanded', String(open));
    document.body.classList.toggle('settings-open', open);
  }

  edited(key) {
    const field = this.fields[key];
    const problem = validateSetting(key, field.value);
    field.classList.toggle('invalid', problem !== '');
    field.setAttribute('aria-invalid', String(problem !== ''));
    this.showErrors();
    if (problem) return;
    this.settings = { ...this.settings, [key]: field.value.trim() === '' ? '' : field.value };
    if (!saveSettings(this.settings)) {
      this.errorEl.textContent = 'This browser refused to store the settings; they last until ' +
          'the page is reloaded.';
    }
    this.onChange(this.settings);
  }

  showErrors() {
    const problems = [];
    for (const [key, field] of Object.entries(this.fields)) {
      const p = validateSetting(key, field.value);
      if (p) problems.push(`${field.closest('label').firstChild.textContent.trim()}: ${p}`);
    }
    this.errorEl.textContent = problems.join('; ');
  }

  // True when every field holds a valid value (requests are refused otherwise, so the user is
  // never surprised by a request made with an older value than the one on screen).
  valid() {
    return Object.entries(this.fields).every(([k, f]) => validateSetting(k, f.value) === '');
  }

  reset() {
    this.settings = { ...DEFAULT_SETTINGS };
    for (const [key, field] of Object.entries(this.fields)) {
      field.value = this.settings[key];
      field.classList.remove('invalid');
      field.removeAttribute('aria-invalid');
    }
    this.errorEl.textContent = '';
    saveSettings(this.settings);
    this.onChange(this.settings);
  }
}
