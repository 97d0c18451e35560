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
 * (java/lang/Object; arrays as their descriptor, [I); a ':' in a name (the format's separator,
 * legal in a JVM name) is written as '_'.
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

static struct {
        jvmtiEnv *jvmti;
        pthread_mutex_t lock;
        FILE *f;
        int zip, closed, full, nothis;
        z_stream zs;
        uint32_t crc;
        uint64_t in, out; /* member bytes, deflated bytes */
        uint64_t next_thread, next_object;
        /* class names interned: names[i], a hash table of indexes + 1 */
        char **names;
        uint32_t nnames, *slot;
        size_t cap;
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

/* The local header of `trace`: deflate, sizes and CRC in the descriptor. */
static void zip_start(void)
{
        put32(0x04034b50);
        put16(20);
        put16(8); /* bit 3: a data descriptor follows the data */
        put16(8);
        put32(0);
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
        put32(0);
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

/* One line (with its newline), under the lock. */
static void emit(const char *line, size_t n)
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

/* The number of class name s (interned on first sight), under the lock;
 * CLASSES_MAX when the table is full. */
static uint32_t class_number(const char *s)
{
        if (g.nnames + 1 >= CLASSES_MAX)
                return CLASSES_MAX - 1;
        if ((g.nnames + 1) * 2 > g.cap) {
                size_t ncap = g.cap ? g.cap * 2 : 4096;
                uint32_t *ns = calloc(ncap, sizeof *ns);
                char **nn = realloc(g.names, ncap / 2 * sizeof *nn);
                if (!ns || !nn) {
                        free(ns);
                        if (nn)
                                g.names = nn;
                        return CLASSES_MAX - 1;
                }
                g.names = nn;
                for (uint32_t i = 0; i < g.nnames; i++) {
                        size_t j = hash(g.names[i]) & (ncap - 1);
                        while (ns[j])
                                j = (j + 1) & (ncap - 1);
                        ns[j] = i + 1;
                }
                free(g.slot);
                g.slot = ns;
                g.cap = ncap;
        }
        size_t j = hash(s) & (g.cap - 1);
        while (g.slot[j] && strcmp(g.names[g.slot[j] - 1], s) != 0)
                j = (j + 1) & (g.cap - 1);
        if (g.slot[j])
                return g.slot[j] - 1;
        char *d = strdup(s);
        if (!d)
                return CLASSES_MAX - 1;
        g.names[g.nnames] = d;
        g.slot[j] = ++g.nnames;
        return g.nnames - 1;
}

static const char *class_name(uint32_t i)
{
        return i < g.nnames ? g.names[i] : "?";
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

static void JNICALL on_vm_init(jvmtiEnv *j, JNIEnv *e, jthread t)
{
        (void)e, (void)t;
        pthread_mutex_lock(&g.lock);
        emitf("VI:%llu", (unsigned long long)now_ns());
        pthread_mutex_unlock(&g.lock);
        static const jvmtiEvent live[] = {
            JVMTI_EVENT_METHOD_ENTRY, JVMTI_EVENT_METHOD_EXIT, JVMTI_EVENT_THREAD_START,
            JVMTI_EVENT_THREAD_END,   JVMTI_EVENT_OBJECT_FREE, JVMTI_EVENT_SAMPLED_OBJECT_ALLOC,
        };
        (*j)->SetHeapSamplingInterval(j, 0);
        for (size_t i = 0; i < sizeof live / sizeof live[0]; i++)
                (*j)->SetEventNotificationMode(j, JVMTI_ENABLE, live[i], NULL);
}

static void JNICALL on_vm_death(jvmtiEnv *j, JNIEnv *e)
{
        (void)j, (void)e;
        pthread_mutex_lock(&g.lock);
        emitf("VD:%llu", (unsigned long long)now_ns());
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
        emitf("CL:%llu:%s", (unsigned long long)now_ns(), name);
        pthread_mutex_unlock(&g.lock);
}

static void JNICALL on_alloc(jvmtiEnv *j, JNIEnv *e, jthread t, jobject o, jclass k, jlong size)
{
        (void)e, (void)t, (void)size;
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
        size_t n = strlen(out);
        g.zip = n >= 4 && strcmp(out + n - 4, ".zip") == 0;
        if (g.zip)
                zip_start();
        return JNI_OK;
}
