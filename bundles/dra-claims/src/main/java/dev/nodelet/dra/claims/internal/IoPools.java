package dev.nodelet.dra.claims.internal;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/** The claim manager's own threads for claim reads and checkpoint writes: daemons, none left while idle. */
final class IoPools {

  private IoPools() {
  }

  static ExecutorService pool(String name, int threads) {
    AtomicInteger n = new AtomicInteger();
    ThreadPoolExecutor pool = new ThreadPoolExecutor(threads, threads, 10, TimeUnit.SECONDS,
        new LinkedBlockingQueue<>(), r -> {
          Thread t = new Thread(r, name + n.incrementAndGet());
          t.setDaemon(true);
          return t;
        });
    pool.allowCoreThreadTimeOut(true); // no thread while idle
    return pool;
  }

  /** A checkpoint write under way may finish (the file is replaced atomically either way); reads are cut short. */
  static void stop(ExecutorService pool) {
    if (pool == null) {
      return;
    }
    pool.shutdown();
    try {
      if (!pool.awaitTermination(2, TimeUnit.SECONDS)) {
        pool.shutdownNow();
        pool.awaitTermination(5, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      pool.shutdownNow();
      Thread.currentThread().interrupt();
    }
  }

}
