import { isSafeRelativePath, isValidModelName } from '../model-paths';
import { MODEL_FEATURES } from '../model-features';
import { MODEL_CATALOG } from './index';

// The catalog is data that a pull trusts: these checks keep a typo from shipping.
describe('MODEL_CATALOG', () => {
  it('has unique, valid names and safe file paths', () => {
    const names = MODEL_CATALOG.map((entry) => entry.name);
    expect(new Set(names).size).toBe(names.length);
    for (const entry of MODEL_CATALOG) {
      expect(isValidModelName(entry.name)).toBe(true);
      expect(entry.files.length).toBeGreaterThan(0);
      for (const file of entry.files) expect(isSafeRelativePath(file.path)).toBe(true);
    }
  });

  it('writes checksums as lowercase sha256 and sizes as positive integers, or null', () => {
    for (const file of MODEL_CATALOG.flatMap((entry) => entry.files)) {
      if (file.sha256 !== null) expect(file.sha256).toMatch(/^[0-9a-f]{64}$/);
      if (file.sizeBytes !== null) expect(Number.isInteger(file.sizeBytes) && file.sizeBytes > 0).toBe(true);
    }
  });

  it('pins a full commit hash for every Hub model, or says why not', () => {
    for (const entry of MODEL_CATALOG) {
      if (entry.kind !== 'hub') continue;
      if (!/^[0-9a-f]{40}$/.test(entry.source.revision)) expect(entry.source.revisionNote).toMatch(/not pinned/);
    }
  });

  it('gives every model a licence with an SPDX id and a URL, and every Hub model is optional', () => {
    for (const entry of MODEL_CATALOG) {
      expect(entry.licence.spdx).toMatch(/^[A-Za-z0-9.-]+$/);
      expect(entry.licence.url).toMatch(/^https:\/\//);
      if (entry.kind === 'hub') expect(entry.optional).toBe(true);
    }
  });

  it('only names catalog models in the feature list', () => {
    const names = new Set(MODEL_CATALOG.map((entry) => entry.name));
    for (const feature of MODEL_FEATURES) for (const model of feature.models) expect(names.has(model)).toBe(true);
  });
});
