/* schedule_walk.h - the walk of a prepared order (schedule_sim.c) on one
 * machine-integer type, with the steady phase's repeats skipped.  Not a
 * header: schedule_sim.c includes it once per type, with WALK_INT the
 * type, WALK(name) naming its functions and WALK_CHECK set when an end
 * may pass the type's range: plc_sched_int (128 bits where the compiler
 * has them, every step bounded by fast_fits), and int64_t for a step
 * whose blocks take no negative time and whose ends stay below
 * WALK64_LIM (checked as they are written: half the memory and far
 * fewer instructions than 128 bits; a run that passes it is walked
 * again on plc_sched_int). */

/* The walk's state: durations (duri's entries), per position its end,
 * per stage when it is free, its busy time, its warm-up and steady idle
 * time, and its busy time's growth over a period. */
typedef struct WALK(walk) {
  sim_run *r;
  const WALK_INT *d;
  WALK_INT *end, *free, *busy, *warm, *steady, *grow;
  int over; /* WALK_CHECK: an end passed WALK64_LIM (the run is void) */
} WALK(walk);

/* The idle phase that ends at a marked block starting at start. */
static void WALK(mark)(WALK(walk) *w, int st, int mark, WALK_INT start)
{
  if (mark == MARK_WARM)
    w->warm[st] = start - w->busy[st];
  else
    w->steady[st] = start - w->busy[st] - w->warm[st];
}

/* Walk steps [from, to) of the order, dep at from's dependencies;
 * returns to's.  No sum can overflow: fast_fits bounds the whole step on
 * plc_sched_int; on int64_t every duration and latency is below 2^52 and
 * every end read was at most WALK64_LIM = 2^62 (else the run is void).
 * When no block takes a negative time (nonneg, a constant in each copy:
 * the loop is most of a large step's re-analysis) a stage is never free
 * before a block of its own has ended, so a dependency on the same stage
 * (an earlier block of it) cannot delay a start and only those on other
 * stages are read. */
static inline __attribute__((always_inline)) const prep_dep *
WALK(loop)(WALK(walk) *w, int from, int to, const prep_dep *dep, const int nonneg)
{
  const WALK_INT *d = w->d;
  WALK_INT *end = w->end, *freei = w->free, *busyi = w->busy;
  prep_fill(w->r->pr, from, to);
  const prep_step *k = w->r->pr->step + from;
  for (int i = from; i < to; i++, k++) {
    int st = k->st;
    WALK_INT start = freei[st];
    const prep_dep *stop = dep + (nonneg ? k->nfar : k->ndep);
    for (const prep_dep *dj = dep; dj < stop; dj++) {
      WALK_INT e = end[dj->pos] + d[dj->lat];
      if (e > start)
        start = e;
    }
    dep += k->ndep;
    if (k->mark != MARK_NONE)
      WALK(mark)(w, st, k->mark, start);
    WALK_INT dur = d[k->dur] + d[k->dur2];
    end[i] = freei[st] = start + dur;
    busyi[st] += dur;
#if WALK_CHECK
    if (end[i] > WALK64_LIM) { /* stop before any sum can overflow */
      w->over = 1;
      return dep;
    }
#endif
  }
  return dep;
}

/* Skipping the steady phase.  Let the order's periodic range be [a, h)
 * with period q (prep_period: step i is step i - q, with every position
 * it reads, its dependencies and its stage's previous step, q earlier;
 * same durations and latencies; no marks), w at least how far back any
 * step of the range reads, and x >= a with x >= w + q.  Suppose the walk
 * has timed every step before x and
 *     (*)  end[t] = end[t - q] + L   for every t in [x - w, x),
 * one constant L.  Then end[t] = end[t - q] + L for every t in [x, h),
 * by induction on t: step t starts at the largest of its stage's previous
 * end and its dependencies' ends plus their latencies (those the walk
 * reads; 0 for a stage's first step, which the range has not); each
 * position it reads is u >= t - w, where the equation holds already
 * (checked below x, the induction at or above it), and step t - q reads
 * u - q with the same latency, so step t starts L after step t - q and,
 * taking as long, ends L after it.  Max and + commute with adding a
 * constant: this is the max-plus shift invariance.  So with y = x + k q
 * <= h:
 *  - every end in [x, y) is end[t - m q] + m L for the m that brings
 *    t - m q into [x - q, x) (the equation m times, each at a t >= x);
 *  - each stage's last end before y is its last before x plus k L: a
 *    stage has a step in every q steps of the range, so its last step
 *    before y is its last before x (at x - q or later) moved by k q;
 *  - its busy time grows by k times what it grew by over [x - q, x) (the
 *    same blocks again; so over any q consecutive steps from a - q on,
 *    each being the step q before it), and no idle phase is read in
 *    [x, y) (no marks).
 * The walk then has exactly the state a full walk reaches at y, once it
 * has written the ends in [x, y) that steps at y or later read: within
 * the range at most w back, after it (from h - q on) down to the tail
 * (prep_span).  The steps [y, h) left in the range (less than a period)
 * end L after the step q before them, by the same equation, so they are
 * timed without reading their dependencies (WALK(replay), which reads
 * ends from y - q on), and the walk carries on at h.  The same holds for a multiple j q
 * of the period from x >= a + (j - 1) q, where step i is step i - j q.
 * When (*) does not hold at any x (a transient longer than the range, a
 * state that repeats only every 7 q or more, times that never settle)
 * nothing is skipped. */

/* (*) at x: every end in [x - w, x) is the end q earlier plus L. */
static int WALK(holds)(const WALK_INT *end, int x, int q, int w, WALK_INT *lambda)
{
  WALK_INT l = end[x - 1] - end[x - 1 - q];
  for (int t = x - w; t < x; t++)
    if (end[t] - end[t - q] != l)
      return 0;
  *lambda = l;
  return 1;
}

/* The jump from x to y = x + k q once (*) holds with L = l, for the
 * period q (a multiple of the order's, see WALK(run)); from is the least
 * position a step at y or later reads, w->grow each stage's busy time's
 * growth over q steps of the range.  Returns y.  On int64_t each stage's
 * end at y, the largest of its ends before y, is checked first (on
 * plc_sched_int, exact below 2^126); past WALK64_LIM the run is void
 * and nothing is written. */
static int WALK(jump)(WALK(walk) *w, int x, int q, int k, WALK_INT l, int from)
{
  plc_sched_sim *sim = w->r->sim;
  int y = x + k * q, p = w->r->s->par.p;
  WALK_INT *end = w->end;
#if WALK_CHECK
  for (int st = 0; st < p; st++)
    if (w->free[st] + (plc_sched_int)k * l > WALK64_LIM) {
      w->over = 1;
      return y;
    }
#endif
  if (from < x)
    from = x;
  for (int m = (from - x) / q + 1, t = from; t < y; m++) /* t - m q in [x - q, x) */
    for (int stop = x + m * q < y ? x + m * q : y; t < stop; t++)
      end[t] = end[t - m * q] + (WALK_INT)m * l;
  for (int st = 0; st < p; st++) {
    w->free[st] += (WALK_INT)k * l;
    w->busy[st] += (WALK_INT)k * w->grow[st];
  }
  sim->skipped = y - x;
  return y;
}

/* The steps [from, to) of the range after a jump (from >= x): each ends
 * L after the step q before it (the equation above, t >= x), so they are
 * timed from it without reading their dependencies.  Returns how many
 * dependencies they have. */
static size_t WALK(replay)(WALK(walk) *w, int from, int to, int q, WALK_INT l)
{
  const WALK_INT *d = w->d;
  WALK_INT *end = w->end;
  size_t nd = 0;
  prep_fill(w->r->pr, from, to);
  const prep_step *k = w->r->pr->step + from;
  for (int t = from; t < to; t++, k++) {
    end[t] = w->free[k->st] = end[t - q] + l;
    w->busy[k->st] += d[k->dur] + d[k->dur2];
    nd += k->ndep;
#if WALK_CHECK
    if (end[t] > WALK64_LIM) {
      w->over = 1;
      return nd;
    }
#endif
  }
  return nd;
}

/* The walk of the whole order, skipping the steady phase's repeats when
 * the state repeats (unless sim->full_walk).  Any q consecutive steps
 * from pa - q on are the same steps (each is the one q before it), so
 * each stage's busy time grows by the same over each (grow, taken over
 * [x0 - q, x0)) and they have the same dependencies (per_dep); j q of
 * them by j times that.  (*) is tried every PERIOD_STRIDE positions
 * (every q when q is less) from the first x where it may hold, not only
 * at period boundaries: the state settles well within a long period.
 * The state may repeat only every j periods of the order (a critical
 * cycle of the max-plus system spanning several periods: its
 * cyclicity), so at each x the check is tried for the periods j q,
 * j = 1..PERIOD_MULT, the order being periodic with each of them on
 * [pa + (j - 1) q, phi).  Returns 0 when the run is void (WALK_CHECK). */
static inline __attribute__((always_inline)) int WALK(run_k)(WALK(walk) *w, const int nonneg)
{
  sim_run *r = w->r;
  const plc_sched_prep *pr = r->pr;
  const prep_span *per = nonneg ? &pr->per.far : &pr->per.all;
  plc_sched_sim *sim = r->sim;
  const prep_dep *dep = pr->dep;
  int i = 0, p = r->s->par.p;
  sim->skipped = 0;
  if (pr->per.q && per->phi && !sim->full_walk) {
    int q = pr->per.q, wd = per->reach, x0 = per->pa > q ? per->pa : q;
    int stride = q < PERIOD_STRIDE ? q : PERIOD_STRIDE;
    WALK_INT *grow = w->grow;
    dep = WALK(loop)(w, 0, x0 - q, dep, nonneg);
    const prep_dep *dep0 = dep;
    memcpy(grow, w->busy, (size_t)p * sizeof *grow);
    dep = WALK(loop)(w, x0 - q, x0, dep, nonneg);
    size_t per_dep = (size_t)(dep - dep0); /* the dependencies of q steps */
    for (int st = 0; st < p; st++)
      grow[st] = w->busy[st] - grow[st];
    i = x0;
    for (int x = x0 > wd + q ? x0 : wd + q; x <= per->phi && !w->over; x += stride) {
      dep = WALK(loop)(w, i, x, dep, nonneg);
      i = x;
      for (int j = 1; j <= PERIOD_MULT; j++) {
        int qj = j * q, k = (per->phi - x) / qj;
        WALK_INT l;
        if (k < 1)
          break;
        if (x < per->pa + (j - 1) * q || x < wd + qj || !WALK(holds)(w->end, x, qj, wd, &l))
          continue;
        /* what steps at y = x + k qj or later read: within the range, at
         * most wd back; from phi - q on, down to the tail */
        int y = x + k * qj;
        int from = per->tail < y - wd ? per->tail : y - wd;
        from = from < y - qj ? from : y - qj; /* what WALK(replay) reads */
        for (int st = 0; st < p; st++)
          grow[st] *= j;
        i = WALK(jump)(w, x, qj, k, l, from);
        if (w->over)
          return 0;
        dep += (size_t)k * (size_t)j * per_dep;
        dep += WALK(replay)(w, i, per->phi, qj, l);
        i = per->phi;
        goto done;
      }
    }
  }
done:
  if (!w->over)
    WALK(loop)(w, i, pr->n, dep, nonneg);
  return !w->over;
}

static int WALK(run)(WALK(walk) *w, int nonneg)
{
  return nonneg ? WALK(run_k)(w, 1) : WALK(run_k)(w, 0);
}
