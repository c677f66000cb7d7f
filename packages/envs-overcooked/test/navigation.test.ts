import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MOVE } from '../src/codes.js';
import { astarFirstMove, OpenMapRouter } from '../src/navigation.js';

const DX = [0, 1, 0, -1];
const DY = [1, 0, -1, 0];
const interior = fc.integer({ min: 1, max: 5 });
const open = (x: number, y: number): boolean => x > 0 && y > 0 && x < 6 && y < 6;

/** Border cells with a floor neighbour (every counter except the four corners). */
const borderTarget = fc
  .tuple(fc.constantFrom('top', 'bottom', 'left', 'right'), interior)
  .map(([side, i]): [number, number] => {
    if (side === 'top') return [0, i];
    if (side === 'bottom') return [6, i];
    if (side === 'left') return [i, 0];
    return [i, 6];
  });

describe('A* navigation', () => {
  it('on the open floor every first move shortens the distance, reaching the target in Manhattan steps', () => {
    fc.assert(
      fc.property(interior, interior, borderTarget, (sx, sy, [tx, ty]) => {
        let x = sx;
        let y = sy;
        let moves = 0;
        const start = Math.abs(tx - x) + Math.abs(ty - y);
        while (Math.abs(tx - x) + Math.abs(ty - y) > 1) {
          const m = astarFirstMove(x, y, tx, ty, open, (ax, ay) => ax === x && ay === y);
          expect(m).toBeLessThan(4);
          x += DX[m] as number;
          y += DY[m] as number;
          expect(open(x, y)).toBe(true);
          moves += 1;
          expect(Math.abs(tx - x) + Math.abs(ty - y)).toBe(start - moves);
        }
        // Adjacent: the first move steps into the target itself.
        const last = astarFirstMove(x, y, tx, ty, open, (ax, ay) => ax === x && ay === y);
        expect([x + (DX[last] as number), y + (DY[last] as number)]).toEqual([tx, ty]);
        expect(moves).toBe(start - 1);
      }),
      { numRuns: 300 },
    );
  });

  it('the cached router answers exactly like the search, for every start and target', () => {
    const router = new OpenMapRouter();
    for (let sx = 1; sx <= 5; sx++) {
      for (let sy = 1; sy <= 5; sy++) {
        for (let tx = 0; tx <= 6; tx++) {
          for (let ty = 0; ty <= 6; ty++) {
            const direct = astarFirstMove(sx, sy, tx, ty, open, (x, y) => x === sx && y === sy);
            expect(router.firstMove(sx, sy, tx, ty)).toBe(direct);
            expect(router.firstMove(sx, sy, tx, ty)).toBe(direct);
          }
        }
      }
    }
  });

  it('matches reference first moves of the original search for every map-A target', () => {
    // Row-major over starts (1,1), (1,2), ..., (5,5); digits are moves (0 right, 1 down,
    // 2 left, 3 up). Ties between equally short paths are broken by the heap order of the
    // original search, which these strings pin down.
    const reference: [number, number, string][] = [
      [0, 5, '0000333333333333333333333'],
      [1, 6, '0000033333333333333333333'],
      [2, 6, '1111100000333333333333333'],
      [1, 0, '2222233333333333333333333'],
      [2, 0, '1111122222333333333333333'],
      [3, 0, '1111111111222223333333333'],
      [6, 5, '1111111111111111111100001'],
    ];
    const router = new OpenMapRouter();
    for (const [tx, ty, moves] of reference) {
      let got = '';
      for (let sx = 1; sx <= 5; sx++) {
        for (let sy = 1; sy <= 5; sy++) got += String(router.firstMove(sx, sy, tx, ty));
      }
      expect(got).toBe(moves);
    }
  });

  it('detours around believed obstacles and stays when boxed in', () => {
    // A wall of believed items at column 2 (rows 1..4) forces a path through row 5.
    const walled = (x: number, y: number): boolean => open(x, y) && !(y === 2 && x <= 4);
    expect(astarFirstMove(1, 1, 1, 3, walled, (x, y) => x === 1 && y === 1)).toBe(MOVE.down);
    const boxed = (x: number, y: number): boolean => x === 3 && y === 3;
    expect(astarFirstMove(3, 3, 0, 5, boxed, (x, y) => x === 3 && y === 3)).toBe(MOVE.stay);
  });
});
