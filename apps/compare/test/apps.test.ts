import { OptionError } from '@poad/config';
import { describe, expect, it } from 'vitest';
import { APPS, appOf } from '../src/apps.js';

describe('appOf', () => {
  it('finds the app of every environment id the apps list', () => {
    for (const app of Object.values(APPS))
      for (const task of app.tasks) expect(appOf(app.envId(task))).toBe(app);
  });

  it('rejects an unknown family and an unknown task of a known family, naming the choices', () => {
    for (const env of ['nowhere/food-preparation', 'virtualhome/no-such-task', 'virtualhome', ''])
      expect(() => appOf(env)).toThrow(OptionError);
    expect(() => appOf('virtualhome/no-such-task')).toThrow(/virtualhome\/food-preparation/);
  });
});
