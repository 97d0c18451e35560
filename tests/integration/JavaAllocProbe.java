// The allocation probe of java_alloc.sh: objects of classes of its own,
// allocated on the main thread before and after a 4 MiB array, on a
// second thread at the same time, by reflection and by clone (both
// allocated inside the JVM, not by bytecode). Every object stays
// reachable (no allocation can be optimised away). It prints its own
// tally, a line `tally <class, JVM internal form> <count>` each, and the
// name of its lambda's class (a JVM hidden class: its name holds a '.').
public class JavaAllocProbe {
    static class First { int v; First(int i) { v = i; } }
    static class Second { int v; Second(int i) { v = i; } }
    static class Third { int v; Third(int i) { v = i; } }
    public static class Fourth { public Fourth() {} }
    static class Fifth implements Cloneable {
        int v;
        Fifth copy() throws CloneNotSupportedException { return (Fifth) clone(); }
    }

    static final int N = 1000, REFLECTED = 10, CLONED = 100;
    static final Object[] keep = new Object[3 * N + REFLECTED + CLONED + 1];

    public static void main(String[] args) throws Exception {
        Runnable other = () -> {
            for (int i = 0; i < N; i++)
                keep[2 * N + i] = new Third(i);
        };
        Thread t = new Thread(other);
        t.start();
        for (int i = 0; i < N; i++)
            keep[i] = new First(i);
        byte[] big = new byte[4 << 20];
        for (int i = 0; i < N; i++)
            keep[N + i] = new Second(i);
        t.join();
        int at = 3 * N;
        // below the JVM's inflation threshold (15 calls): in Java 17 the
        // native accessor, where the JVM allocates the object itself
        // (later Java reflects through method handles)
        for (int i = 0; i < REFLECTED; i++)
            keep[at++] = Fourth.class.getDeclaredConstructor().newInstance();
        Fifth f = new Fifth();
        for (int i = 0; i < CLONED; i++)
            keep[at++] = f.copy();
        keep[at] = big;
        System.out.println("tally JavaAllocProbe$First " + N);
        System.out.println("tally JavaAllocProbe$Second " + N);
        System.out.println("tally JavaAllocProbe$Third " + N);
        System.out.println("tally JavaAllocProbe$Fourth " + REFLECTED);
        System.out.println("tally JavaAllocProbe$Fifth " + (CLONED + 1));
        System.out.println("lambda " + other.getClass().getName());
    }
}
