import { readModel, type Json } from './openapi-model.ts';
import { clientFile, typesFile } from './typescript.ts';
import { renderPython } from './python.ts';

/** The generated files of both SDKs, by path from the repository's root. */
export function generateSdks(document: Json): Map<string, string> {
  const model = readModel(document);
  const python = renderPython(model);
  return new Map([
    ['sdks/typescript/src/generated/types.ts', typesFile(model)],
    ['sdks/typescript/src/generated/client.ts', clientFile(model)],
    ['sdks/python/vinhistory/_types.py', python.types],
    ['sdks/python/vinhistory/_client.py', python.client],
  ]);
}
