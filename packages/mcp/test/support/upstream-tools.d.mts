export const PNG: string;
export const WAV: string;
export const TOOLS: readonly Record<string, unknown>[];
export const LATE: Record<string, unknown>;
