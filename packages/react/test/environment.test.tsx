import { version as reactVersion } from 'react';
import { version as reactDomVersion } from 'react-dom';
import { describe, expect, it } from 'vitest';

describe('test environment', () => {
  it('runs on the React major its project is for, with one copy of React', ({ task }) => {
    const major = task.file.projectName === 'react-18' ? 18 : 19;
    expect(Number(reactVersion.split('.')[0])).toBe(major);
    expect(reactDomVersion).toBe(reactVersion);
  });
});
