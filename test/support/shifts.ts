/**
 * A working time that covers any run instant with hours to spare: a shift starting every day at
 * 00:00 and lasting eight days. Run tests plan "from now", so a plain 00:00–23:59 shift would leave
 * only minutes of work when the suite runs shortly before midnight.
 */
export const ALWAYS_ON_SHIFT = { startTime: "00:00", endTime: "23:59", multiday: 7 };
