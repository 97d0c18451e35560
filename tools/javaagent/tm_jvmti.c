/* libtmjava.so: a JVMTI agent writing the Java tracing tool's execution
 * trace format (docs/formats/java.md) from a running JVM:
 *
 *   java -agentpath:/path/to/libtmjava.so=OUT[,nothis] -cp . Main
 *
 * OUT ending in ".zip" is written as a ready archive: a ZIP file whose one
 * member, `trace`, is deflated as the lines come (a data descriptor after
 * it, so nothing is held back); any other OUT gets the text itself.
 * Default: "trace.zip". `nothis` leaves out MN's object id (written as 0,
 * as for a static method): finding `this` (GetLocalInstance) is a VM
 * operation at a safepoint in Java 17, and makes a method-heavy program
 * about 12 times slower to record than without it.
 *
 * Events (JVMTI -> the paper's line):
 *   VMStart VS, VMInit VI, VMDeath VD; ClassLoad CL (array classes have
 *   no load event); SampledObjectAlloc with a sampling interval of 0,
 *   i.e. every allocation, OA; ObjectFree OF; ThreadStart TB, ThreadEnd
 *   TE; MethodEntry MN; MethodExit MX, or FP when the frame was popped by
 *   an exception (was_popped_by_exception).
 * Time stamps are CLOCK_MONOTONIC nanoseconds. Thread ids are numbers the
 * agent gives threads in the order they are first seen (1, 2, ...), kept
 * in JVMTI thread-local storage; a thread first seen in another event
 * than ThreadStart (the main thread) gets its TB line then. Object ids:
 * each object allocated gets the next number; its JVMTI tag holds it and
 * the number of its class name (tag = id << 20 | class), so ObjectFree,
 * which gets only the tag, can name the class without a table per object;
 * `this` of an untagged object (allocated before the live phase) is
 * tagged when first met, marked so that its free writes no OF (the trace
 * has no OA of it: OF lines are of objects the trace saw allocated). Method events are enabled at
 * VMInit: the start phase's own calls are not recorded. Class names are the JVM's internal form
 * (java/lang/Object; arrays as their descriptor, [I; a hidden class as
 * Main$$Lambda$1.0x00007f0860000a08); a ':' in a name (the format's separator,
 * legal in a JVM name) is written as '_'.
 *
 * Every allocation of every thread from VMInit on (docs/formats/java.md
 * "What JVMTI sees"): the sampling interval is 0 from Agent_OnLoad, before
 * any Java thread exists; at VMInit, after enabling SampledObjectAlloc, a
 * collection retires every thread's allocation buffer (whose end was set
 * while the event was off), and two objects the agent allocates must both
 * be reported (they are counted, not written).
 *
 * Notes: what the agent could not see (classes loaded before VMStart,
 * allocations and calls before VMInit, frees not collected, nothis, a
 * failed allocation check) is written as comment lines, `# text`, before
 * VS: the lines written before VMInit are held in memory until VMInit has
 * counted what the notes say, then follow the notes.
 *
 * Limits: at most 2^20 class names and 2^42 objects (the tag's fields);
 * the ZIP has no ZIP64 records, so the agent stops writing (and says so
 * on stderr) before the member reaches 4 GiB. Every event takes one lock:
 * the trace is in the order the lines were written. */
#include <jvmti.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#define CLASS_BITS 20
#define CLASSES_MAX (1u << CLASS_BITS)
#define TAG_UNALLOCATED (1ull << CLASS_BITS) /* tagged as `this`, no OA line */
#define ID_SHIFT (CLASS_BITS + 1)
#define ZIP_LIMIT 0xffff0000u /* bytes of the member, below ZIP64's need */

/* Interned names: names[i], a hash table of indexes + 1. */
struct names {
        char **names;
        uint32_t n, *slot;
        size_t cap;
};

static struct {
        jvmtiEnv *jvmti;
        pthread_mutex_t lock;
        FILE *f;
        int zip, closed, full, nothis;
        uint16_t dos_time, dos_date; /* the member's time: when recording began */
        z_stream zs;
        uint32_t crc;
        uint64_t in, out; /* member bytes, deflated bytes */
        uint64_t next_thread, next_object;
        /* The lines written before VMInit's notes are known (VS, the start
         * phase's CL lines), held to go after the notes; a write error of
         * the held copy (out of memory) flushes it and gives up the notes. */
        struct {
                char *p;
                size_t len, cap;
                int on, lost;
        } held;
        jvmtiError interval_err; /* SetHeapSamplingInterval(0) at load */
        struct names classes;    /* of objects' tags */
        struct names loaded;     /* of CL lines written */
} g = {.lock = PTHREAD_MUTEX_INITIALIZER};

static uint64_t now_ns(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void put16(unsigned v)
{
        fputc((int)(v & 0xff), g.f);
        fputc((int)(v >> 8 & 0xff), g.f);
}

static void put32(uint32_t v)
{
        put16(v & 0xffff);
        put16(v >> 16);
}

/* ---- the output ---- */

static void zip_deflate(const void *p, size_t n, int flush)
{
        unsigned char buf[65536];
        g.zs.next_in = (Bytef *)p;
        g.zs.avail_in = (uInt)n;
        do {
                g.zs.next_out = buf;
                g.zs.avail_out = sizeof buf;
                deflate(&g.zs, flush);
                size_t k = sizeof buf - g.zs.avail_out;
                fwrite(buf, 1, k, g.f);
                g.out += k;
        } while (g.zs.avail_out == 0 || (flush == Z_FINISH && g.zs.avail_in));
}

/* The MS-DOS time and date of t in local time, as ZIP headers hold it
 * (2-second steps; a time before 1980 is 1980-01-01 00:00). */
static void dos_stamp(time_t t, uint16_t *dtime, uint16_t *ddate)
{
        struct tm lt;
        if (!localtime_r(&t, &lt) || lt.tm_year < 80 || lt.tm_year > 80 + 127) {
                *dtime = 0;
                *ddate = 1 << 5 | 1;
                return;
        }
        *dtime = (uint16_t)(lt.tm_hour << 11 | lt.tm_min << 5 | lt.tm_sec / 2);
        *ddate = (uint16_t)((lt.tm_year - 80) << 9 | (lt.tm_mon + 1) << 5 | lt.tm_mday);
}

/* The local header of `trace`: deflate, sizes and CRC in the descriptor. */
static void zip_start(void)
{
        put32(0x04034b50);
        put16(20);
        put16(8); /* bit 3: a data descriptor follows the data */
        put16(8);
        put16(g.dos_time);
        put16(g.dos_date);
        put32(0);
        put32(0);
        put32(0);
        put16(5);
        put16(0);
        fwrite("trace", 1, 5, g.f);
        deflateInit2(&g.zs, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY);
}

static void zip_finish(void)
{
        zip_deflate(NULL, 0, Z_FINISH);
        deflateEnd(&g.zs);
        uint32_t lho = 0, cd = (uint32_t)(30 + 5 + g.out + 16);
        put32(0x08074b50);
        put32(g.crc);
        put32((uint32_t)g.out);
        put32((uint32_t)g.in);
        put32(0x02014b50);
        put16(0x031e);
        put16(20);
        put16(8);
        put16(8);
        put16(g.dos_time);
        put16(g.dos_date);
        put32(g.crc);
        put32((uint32_t)g.out);
        put32((uint32_t)g.in);
        put16(5);
        put16(0);
        put16(0);
        put16(0);
        put16(0);
        put32(0100644u << 16);
        put32(lho);
        fwrite("trace", 1, 5, g.f);
        put32(0x06054b50);
        put16(0);
        put16(0);
        put16(1);
        put16(1);
        put32(46 + 5);
        put32(cd);
        put16(0);
}

/* One line (with its newline) into the output, under the lock. */
static void out_line(const char *line, size_t n)
{
        if (g.closed || g.full)
                return;
        if (g.zip) {
                if (g.in + n > ZIP_LIMIT) {
                        g.full = 1;
                        fprintf(stderr, "tmjava: the trace reached 4 GiB, which needs ZIP64; "
                                        "the rest is not written\n");
                        return;
                }
                g.crc = (uint32_t)crc32(g.crc, (const Bytef *)line, (uInt)n);
                g.in += n;
                zip_deflate(line, n, Z_NO_FLUSH);
        } else {
                fwrite(line, 1, n, g.f);
        }
}

/* The held lines into the output, and no more held; under the lock. */
static void held_flush(void)
{
        if (g.held.len)
                out_line(g.held.p, g.held.len);
        free(g.held.p);
        g.held.p = NULL;
        g.held.len = g.held.cap = 0;
        g.held.on = 0;
}

/* One line (with its newline), under the lock: held while the notes are
 * not written yet (the notes come first in the trace), else written. */
static void emit(const char *line, size_t n)
{
        if (g.held.on && g.held.len + n > g.held.cap) {
                size_t ncap = g.held.cap ? g.held.cap * 2 : 65536;
                while (ncap < g.held.len + n)
                        ncap *= 2;
                char *np = realloc(g.held.p, ncap);
                if (!np) {
                        fprintf(stderr, "tmjava: out of memory: the trace has no notes\n");
                        g.held.lost = 1;
                        held_flush();
                } else {
                        g.held.p = np;
                        g.held.cap = ncap;
                }
        }
        if (!g.held.on) {
                out_line(line, n);
                return;
        }
        memcpy(g.held.p + g.held.len, line, n);
        g.held.len += n;
}

static void emitf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void emitf(const char *fmt, ...)
{
        char line[4096];
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(line, sizeof line - 1, fmt, ap);
        va_end(ap);
        if (n < 0)
                return;
        if ((size_t)n > sizeof line - 2)
                n = sizeof line - 2;
        line[n++] = '\n';
        emit(line, (size_t)n);
}

/* ---- names ---- */

static uint64_t hash(const char *s)
{
        uint64_t h = 0xcbf29ce484222325ull;
        for (; *s; s++)
                h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
        return h;
}

#define NAME_NONE UINT32_MAX /* name_number: not in the table, add not set */

/* The number of name s in t, interned on first sight when add is set;
 * under the lock. CLASSES_MAX - 1 when the table is full (or out of
 * memory), NAME_NONE when s is not in t and add is not set. */
static uint32_t name_number(struct names *t, const char *s, int add)
{
        if (t->n + 1 >= CLASSES_MAX)
                return CLASSES_MAX - 1;
        if ((t->n + 1) * 2 > t->cap) {
                size_t ncap = t->cap ? t->cap * 2 : 4096;
                uint32_t *ns = calloc(ncap, sizeof *ns);
                char **nn = realloc(t->names, ncap / 2 * sizeof *nn);
                if (!ns || !nn) {
                        free(ns);
                        if (nn)
                                t->names = nn;
                        return CLASSES_MAX - 1;
                }
                t->names = nn;
                for (uint32_t i = 0; i < t->n; i++) {
                        size_t j = hash(t->names[i]) & (ncap - 1);
                        while (ns[j])
                                j = (j + 1) & (ncap - 1);
                        ns[j] = i + 1;
                }
                free(t->slot);
                t->slot = ns;
                t->cap = ncap;
        }
        size_t j = hash(s) & (t->cap - 1);
        while (t->slot[j] && strcmp(t->names[t->slot[j] - 1], s) != 0)
                j = (j + 1) & (t->cap - 1);
        if (t->slot[j])
                return t->slot[j] - 1;
        if (!add)
                return NAME_NONE;
        char *d = strdup(s);
        if (!d)
                return CLASSES_MAX - 1;
        t->names[t->n] = d;
        t->slot[j] = ++t->n;
        return t->n - 1;
}

/* The number of class name s (for a tag), under the lock. */
static uint32_t class_number(const char *s)
{
        return name_number(&g.classes, s, 1);
}

static const char *class_name(uint32_t i)
{
        return i < g.classes.n ? g.classes.names[i] : "?";
}

/* A class signature ("Ljava/lang/String;", "[I") in the trace's form:
 * without L and ;, ':' as '_'. Into buf (cap bytes). */
static void sig_to_name(const char *sig, char *buf, size_t cap)
{
        size_t n = strlen(sig);
        if (n >= 2 && sig[0] == 'L' && sig[n - 1] == ';') {
                sig++;
                n -= 2;
        }
        if (n >= cap)
                n = cap - 1;
        for (size_t i = 0; i < n; i++)
                buf[i] = sig[i] == ':' ? '_' : sig[i];
        buf[n] = '\0';
}

static void klass_name(jvmtiEnv *j, jclass k, char *buf, size_t cap)
{
        char *sig = NULL;
        if (!k || (*j)->GetClassSignature(j, k, &sig, NULL) != JVMTI_ERROR_NONE || !sig) {
                snprintf(buf, cap, "?");
                return;
        }
        sig_to_name(sig, buf, cap);
        (*j)->Deallocate(j, (unsigned char *)sig);
}

/* The thread's number, under the lock: given (and TB written) when the
 * thread is first seen. */
static uint64_t thread_number(jvmtiEnv *j, jthread t)
{
        void *p = NULL;
        (*j)->GetThreadLocalStorage(j, t, &p);
        if (p)
                return (uint64_t)(uintptr_t)p;
        uint64_t id = ++g.next_thread;
        (*j)->SetThreadLocalStorage(j, t, (void *)(uintptr_t)id);
        emitf("TB:%llu:%llu", (unsigned long long)now_ns(), (unsigned long long)id);
        return id;
}

/* A new object id for object o of class cls (a name), tagged (with
 * TAG_UNALLOCATED: an object met as `this` that the trace did not see
 * allocated); under the lock. */
static uint64_t tag_object(jvmtiEnv *j, jobject o, const char *cls, uint64_t flags)
{
        uint64_t id = ++g.next_object;
        jlong tag = (jlong)(id << ID_SHIFT | flags | class_number(cls));
        (*j)->SetTag(j, o, tag);
        return id;
}

/* ---- events ---- */

static void JNICALL on_vm_start(jvmtiEnv *j, JNIEnv *e)
{
        (void)j, (void)e;
        pthread_mutex_lock(&g.lock);
        emitf("VS:%llu", (unsigned long long)now_ns());
        pthread_mutex_unlock(&g.lock);
}

/* Set while the agent allocates its check objects (on_vm_init): their
 * SampledObjectAlloc events are counted, not written. */
static __thread int checking;
static int checked_samples;

/* The allocation check: two objects allocated by the agent on this thread
 * (the first refills its allocation buffer, the second is taken from it),
 * each of which must reach on_alloc. 1 when both did, else 0. */
static int alloc_check(JNIEnv *e)
{
        jclass k = (*e)->FindClass(e, "java/lang/Object");
        if (!k) {
                (*e)->ExceptionClear(e);
                return 0;
        }
        checked_samples = 0;
        checking = 1;
        for (int i = 0; i < 2; i++) {
                jobject o = (*e)->AllocObject(e, k);
                if (o)
                        (*e)->DeleteLocalRef(e, o);
        }
        checking = 0;
        (*e)->ExceptionClear(e);
        (*e)->DeleteLocalRef(e, k);
        return checked_samples == 2;
}

static jint JNICALL count_object(jlong class_tag, jlong size, jlong *tag, jint len, void *n)
{
        (void)class_tag, (void)size, (void)tag, (void)len;
        ++*(uint64_t *)n;
        return 0;
}

/* What the agent sees at VMInit of what came before it. */
struct before_init {
        int gc_ok, alloc_ok; /* the collection ran; the check objects were seen */
        int classes_ok;      /* classes counted */
        uint64_t classes;    /* classes loaded (not arrays) without a CL line */
        int heap_ok;         /* objects counted */
        uint64_t objects;    /* objects on the heap */
};

/* Loaded classes that are neither arrays nor primitive types whose names
 * have no CL line (GetLoadedClasses, GetClassStatus); under the lock. */
static int count_classes(jvmtiEnv *j, JNIEnv *e, uint64_t *n)
{
        jint nk = 0;
        jclass *ks = NULL;
        if ((*j)->GetLoadedClasses(j, &nk, &ks) != JVMTI_ERROR_NONE)
                return 0;
        *n = 0;
        for (jint i = 0; i < nk; i++) {
                jint st = 0;
                char name[2048];
                if ((*j)->GetClassStatus(j, ks[i], &st) == JVMTI_ERROR_NONE &&
                    !(st & (JVMTI_CLASS_STATUS_ARRAY | JVMTI_CLASS_STATUS_PRIMITIVE))) {
                        klass_name(j, ks[i], name, sizeof name);
                        *n += name_number(&g.loaded, name, 0) == NAME_NONE;
                }
                (*e)->DeleteLocalRef(e, ks[i]);
        }
        (*j)->Deallocate(j, (unsigned char *)ks);
        return 1;
}

/* The notes (docs/formats/java.md "Notes"): comment lines, written before
 * the held lines; under the lock. */
static void write_notes(const struct before_init *b)
{
        char line[512], classes[32] = "not counted", objects[32] = "not counted";
        if (b->classes_ok)
                snprintf(classes, sizeof classes, "%llu", (unsigned long long)b->classes);
        if (b->heap_ok)
                snprintf(objects, sizeof objects, "%llu", (unsigned long long)b->objects);
#define NOTE(...) out_line(line, (size_t)snprintf(line, sizeof line, "# " __VA_ARGS__))
        NOTE("classes loaded before VMStart: %s, without a CL line (JVMTI reports class loads "
             "from VMStart on; array classes have none)\n",
             classes);
        NOTE("objects allocated before VMInit: no OA line (JVMTI reports allocations from VMInit "
             "on); objects on the heap at VMInit: %s\n",
             objects);
        if (g.interval_err == JVMTI_ERROR_NONE && b->gc_ok && b->alloc_ok)
                NOTE("allocations from VMInit on: every one, of every thread (sampling interval "
                     "0 from load, allocation buffers retired at VMInit, checked)\n");
        else
                NOTE("allocations from VMInit on: some may be missing (%s)\n",
                     g.interval_err != JVMTI_ERROR_NONE ? "the sampling interval could not be "
                                                          "set to 0 at load"
                     : !b->gc_ok ? "no collection at VMInit to retire allocation buffers"
                                 : "an object allocated at VMInit was not reported");
        NOTE("method calls before VMInit: no MN, MX or FP line\n");
        NOTE("OF lines: objects freed by a collection before VMDeath; the others stay live\n");
        if (g.nothis)
                NOTE("nothis: MN lines carry object 0 (this was not looked up)\n");
#undef NOTE
}

static void JNICALL on_vm_init(jvmtiEnv *j, JNIEnv *e, jthread t)
{
        (void)t;
        pthread_mutex_lock(&g.lock);
        emitf("VI:%llu", (unsigned long long)now_ns());
        pthread_mutex_unlock(&g.lock);
        static const jvmtiEvent live[] = {
            JVMTI_EVENT_METHOD_ENTRY, JVMTI_EVENT_METHOD_EXIT, JVMTI_EVENT_THREAD_START,
            JVMTI_EVENT_THREAD_END,   JVMTI_EVENT_OBJECT_FREE, JVMTI_EVENT_SAMPLED_OBJECT_ALLOC,
        };
        for (size_t i = 0; i < sizeof live / sizeof live[0]; i++)
                (*j)->SetEventNotificationMode(j, JVMTI_ENABLE, live[i], NULL);
        /* A thread allocates from its buffer with no event until the
         * buffer's end, set when the thread last took the slow path:
         * the sampled event is enabled only now, so each thread's buffer
         * ends where it was filled. A collection retires every buffer:
         * each thread's next allocation refills its buffer, is sampled,
         * and the sampler (interval 0) sets the buffer's end at its top. */
        struct before_init b = {0};
        b.gc_ok = (*j)->ForceGarbageCollection(j) == JVMTI_ERROR_NONE;
        b.alloc_ok = alloc_check(e);
        jvmtiHeapCallbacks hc = {0};
        hc.heap_iteration_callback = count_object;
        b.heap_ok = (*j)->IterateThroughHeap(j, 0, NULL, &hc, &b.objects) == JVMTI_ERROR_NONE;
        pthread_mutex_lock(&g.lock);
        b.classes_ok = count_classes(j, e, &b.classes);
        if (!g.held.lost)
                write_notes(&b);
        held_flush();
        pthread_mutex_unlock(&g.lock);
}

static void JNICALL on_vm_death(jvmtiEnv *j, JNIEnv *e)
{
        (void)j, (void)e;
        pthread_mutex_lock(&g.lock);
        emitf("VD:%llu", (unsigned long long)now_ns());
        held_flush(); /* no VMInit: the held lines without notes */
        if (g.zip)
                zip_finish();
        fclose(g.f);
        g.closed = 1;
        pthread_mutex_unlock(&g.lock);
}

static void JNICALL on_class_load(jvmtiEnv *j, JNIEnv *e, jthread t, jclass k)
{
        (void)e, (void)t;
        char name[2048];
        klass_name(j, k, name, sizeof name);
        pthread_mutex_lock(&g.lock);
        name_number(&g.loaded, name, 1);
        emitf("CL:%llu:%s", (unsigned long long)now_ns(), name);
        pthread_mutex_unlock(&g.lock);
}

static void JNICALL on_alloc(jvmtiEnv *j, JNIEnv *e, jthread t, jobject o, jclass k, jlong size)
{
        (void)e, (void)t, (void)size;
        if (checking) {
                checked_samples++;
                return;
        }
        char name[2048];
        klass_name(j, k, name, sizeof name);
        pthread_mutex_lock(&g.lock);
        uint64_t id = tag_object(j, o, name, 0);
        emitf("OA:%llu:%s:%llu", (unsigned long long)now_ns(), name, (unsigned long long)id);
        pthread_mutex_unlock(&g.lock);
}

/* Only raw monitors and a few JVMTI functions are allowed here: the
 * class comes from the tag, the line from our own lock. */
static void JNICALL on_free(jvmtiEnv *j, jlong tag)
{
        (void)j;
        uint64_t v = (uint64_t)tag;
        if (v & TAG_UNALLOCATED)
                return;
        pthread_mutex_lock(&g.lock);
        emitf("OF:%llu:%s:%llu", (unsigned long long)now_ns(),
              class_name((uint32_t)(v & (CLASSES_MAX - 1))), (unsigned long long)(v >> ID_SHIFT));
        pthread_mutex_unlock(&g.lock);
}

static void JNICALL on_thread_start(jvmtiEnv *j, JNIEnv *e, jthread t)
{
        (void)e;
        pthread_mutex_lock(&g.lock);
        thread_number(j, t);
        pthread_mutex_unlock(&g.lock);
}

static void JNICALL on_thread_end(jvmtiEnv *j, JNIEnv *e, jthread t)
{
        (void)e;
        pthread_mutex_lock(&g.lock);
        uint64_t id = thread_number(j, t);
        emitf("TE:%llu:%llu", (unsigned long long)now_ns(), (unsigned long long)id);
        pthread_mutex_unlock(&g.lock);
}

/* The method's class and name, into cls and m. */
static void method_names(jvmtiEnv *j, jmethodID mid, char *cls, size_t ccap, char *m, size_t mcap)
{
        jclass k = NULL;
        char *name = NULL;
        (*j)->GetMethodDeclaringClass(j, mid, &k);
        klass_name(j, k, cls, ccap);
        if ((*j)->GetMethodName(j, mid, &name, NULL, NULL) != JVMTI_ERROR_NONE || !name) {
                snprintf(m, mcap, "?");
                return;
        }
        sig_to_name(name, m, mcap); /* a method name has no L...; form: only ':' changes */
        (*j)->Deallocate(j, (unsigned char *)name);
}

static void JNICALL on_method_entry(jvmtiEnv *j, JNIEnv *e, jthread t, jmethodID mid)
{
        char cls[2048], m[1024];
        method_names(j, mid, cls, sizeof cls, m, sizeof m);
        jint mods = 0;
        jobject self = NULL;
        jlong tag = 0;
        (*j)->GetMethodModifiers(j, mid, &mods);
        if (!g.nothis && !(mods & 0x0008 /* ACC_STATIC */) &&
            (*j)->GetLocalInstance(j, t, 0, &self) == JVMTI_ERROR_NONE && self)
                (*j)->GetTag(j, self, &tag);
        char self_cls[2048] = "?";
        if (self && !tag) {
                jclass k = (*e)->GetObjectClass(e, self);
                klass_name(j, k, self_cls, sizeof self_cls);
                (*e)->DeleteLocalRef(e, k);
        }
        pthread_mutex_lock(&g.lock);
        uint64_t tid = thread_number(j, t);
        uint64_t obj = (uint64_t)tag >> ID_SHIFT;
        if (self && !tag)
                obj = tag_object(j, self, self_cls, TAG_UNALLOCATED);
        emitf("MN:%llu:%llu:%s:%s:%llu", (unsigned long long)now_ns(), (unsigned long long)tid, cls,
              m, (unsigned long long)obj);
        pthread_mutex_unlock(&g.lock);
        if (self)
                (*e)->DeleteLocalRef(e, self);
}

static void JNICALL on_method_exit(jvmtiEnv *j, JNIEnv *e, jthread t, jmethodID mid,
                                   jboolean by_exception, jvalue rv)
{
        (void)e, (void)rv;
        char cls[2048], m[1024];
        method_names(j, mid, cls, sizeof cls, m, sizeof m);
        pthread_mutex_lock(&g.lock);
        uint64_t tid = thread_number(j, t);
        emitf("%s:%llu:%llu:%s:%s", by_exception ? "FP" : "MX", (unsigned long long)now_ns(),
              (unsigned long long)tid, cls, m);
        pthread_mutex_unlock(&g.lock);
}

/* ---- loading ---- */

static int fail(const char *what, jvmtiError err)
{
        fprintf(stderr, "tmjava: %s: JVMTI error %d\n", what, (int)err);
        return JNI_ERR;
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
        (void)reserved;
        static char out[4096];
        snprintf(out, sizeof out, "%s", options && *options ? options : "trace.zip");
        size_t ol = strlen(out);
        if (ol > 7 && strcmp(out + ol - 7, ",nothis") == 0) {
                out[ol - 7] = '\0';
                g.nothis = 1;
        }
        jvmtiEnv *j = NULL;
        if ((*vm)->GetEnv(vm, (void **)&j, JVMTI_VERSION_11) != JNI_OK || !j) {
                fprintf(stderr, "tmjava: this JVM has no JVMTI 11 (Java 11 or later needed)\n");
                return JNI_ERR;
        }
        g.jvmti = j;
        jvmtiCapabilities caps = {0};
        caps.can_generate_method_entry_events = 1;
        caps.can_generate_method_exit_events = 1;
        caps.can_generate_sampled_object_alloc_events = 1;
        caps.can_generate_object_free_events = 1;
        caps.can_tag_objects = 1;
        caps.can_access_local_variables = 1;
        jvmtiError err = (*j)->AddCapabilities(j, &caps);
        if (err != JVMTI_ERROR_NONE)
                return fail("AddCapabilities", err);
        /* Allowed in the OnLoad phase: every thread's first sample point is
         * drawn with interval 0 (a point drawn with the default, 512 KiB,
         * would hold until that thread's next sample). */
        g.interval_err = (*j)->SetHeapSamplingInterval(j, 0);
        jvmtiEventCallbacks cb = {0};
        cb.VMStart = on_vm_start;
        cb.VMInit = on_vm_init;
        cb.VMDeath = on_vm_death;
        cb.ClassLoad = on_class_load;
        cb.SampledObjectAlloc = on_alloc;
        cb.ObjectFree = on_free;
        cb.ThreadStart = on_thread_start;
        cb.ThreadEnd = on_thread_end;
        cb.MethodEntry = on_method_entry;
        cb.MethodExit = on_method_exit;
        if ((err = (*j)->SetEventCallbacks(j, &cb, (jint)sizeof cb)) != JVMTI_ERROR_NONE)
                return fail("SetEventCallbacks", err);
        static const jvmtiEvent early[] = {JVMTI_EVENT_VM_START, JVMTI_EVENT_VM_INIT,
                                           JVMTI_EVENT_VM_DEATH, JVMTI_EVENT_CLASS_LOAD};
        for (size_t i = 0; i < sizeof early / sizeof early[0]; i++)
                if ((err = (*j)->SetEventNotificationMode(j, JVMTI_ENABLE, early[i], NULL)) !=
                    JVMTI_ERROR_NONE)
                        return fail("SetEventNotificationMode", err);
        g.f = fopen(out, "wb");
        if (!g.f) {
                perror(out);
                return JNI_ERR;
        }
        setvbuf(g.f, NULL, _IOFBF, 1 << 20);
        g.held.on = 1;
        size_t n = strlen(out);
        g.zip = n >= 4 && strcmp(out + n - 4, ".zip") == 0;
        if (g.zip) {
                dos_stamp(time(NULL), &g.dos_time, &g.dos_date);
                zip_start();
        }
        return JNI_OK;
}
