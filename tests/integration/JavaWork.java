// A small Java program for java_agent.sh: two worker threads calling
// methods (one of them left by an exception, a frame pop), objects that
// become garbage and a System.gc() that frees them, so every event of the
// Java trace format occurs in its recording. Its argument is the objects
// each worker makes (default 200; bench/java.sh gives more).
import java.util.ArrayList;
import java.util.List;

public class JavaWork {
    static class Node {
        final int value;
        Node(int v) { value = v; }
        int twice() { return 2 * value; }
    }

    static int fails(int depth) {
        if (depth == 0)
            throw new IllegalStateException("popped");
        return fails(depth - 1);
    }

    static int work(int n) {
        int sum = 0;
        for (int i = 0; i < n; i++)
            sum += new Node(i).twice();
        try {
            fails(3);
        } catch (IllegalStateException e) {
            sum++;
        }
        return sum;
    }

    public static void main(String[] args) throws Exception {
        final int n = args.length > 0 ? Integer.parseInt(args[0]) : 200;
        List<Thread> ts = new ArrayList<>();
        for (int t = 0; t < 2; t++) {
            Thread th = new Thread(() -> work(n));
            ts.add(th);
            th.start();
        }
        for (Thread th : ts)
            th.join();
        System.gc();
        Thread.sleep(100);
        System.out.println("done " + work(10));
    }
}
