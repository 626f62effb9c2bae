// The tools a confined command may ask to run outside: one file each. Add a tool here.
import { gh } from './gh';
import type { Tool } from './tool';

export const TOOLS: readonly Tool[] = [gh];

export function toolNamed(name: string): Tool | undefined {
  return TOOLS.find((t) => t.name === name);
}
