/**
 * Waits for the next wall-clock second. Ids order by their creation second and, within one second, at
 * random (shared/domain/ids.ts), so a test that asserts the order of items it created mints each in a
 * second of its own.
 */
export async function nextIdSecond(): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 1005 - (Date.now() % 1000)));
}
