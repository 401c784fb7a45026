package dev.nodelet.kube.internal.watch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class SerialExecutorTest {

  private final ExecutorService pool = Executors.newSingleThreadExecutor(task -> new Thread(task, "pool"));

  @AfterEach
  void stop() throws InterruptedException {
    pool.shutdownNow();
    assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
  }

  @Test
  void anIdleExecutorRunsATaskOnTheCallingThread() {
    SerialExecutor serial = new SerialExecutor(pool);
    List<String> threads = new CopyOnWriteArrayList<>();

    serial.executeHere(() -> threads.add(Thread.currentThread().getName()));

    assertThat(threads).containsExactly(Thread.currentThread().getName());
  }

  @Test
  void aBusyExecutorQueuesTheTaskBehindWhatRunsInOrderAndNeverTwoAtOnce() throws InterruptedException {
    SerialExecutor serial = new SerialExecutor(pool);
    CountDownLatch running = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    List<String> done = new CopyOnWriteArrayList<>();
    AtomicInteger inside = new AtomicInteger();
    AtomicInteger overlaps = new AtomicInteger();
    serial.execute(() -> {
      running.countDown();
      await().until(() -> release.getCount() == 0);
      done.add("first on " + Thread.currentThread().getName());
    });
    assertThat(running.await(10, TimeUnit.SECONDS)).isTrue();

    for (int i = 0; i < 3; i++) {
      int n = i;
      serial.executeHere(() -> {
        if (inside.incrementAndGet() > 1) {
          overlaps.incrementAndGet();
        }
        done.add("here " + n + " on " + Thread.currentThread().getName());
        inside.decrementAndGet();
      });
    }
    // the caller did not run them: the first task still runs
    assertThat(done).isEmpty();
    release.countDown();

    await().atMost(Duration.ofSeconds(10)).until(() -> done.size() == 4);
    assertThat(done).containsExactly("first on pool", "here 0 on pool", "here 1 on pool", "here 2 on pool");
    assertThat(overlaps).hasValue(0);
  }

  @Test
  void aClosedExecutorRunsNothingHere() {
    SerialExecutor serial = new SerialExecutor(pool);
    serial.close();
    List<String> ran = new CopyOnWriteArrayList<>();

    serial.executeHere(() -> ran.add("ran"));

    assertThat(ran).isEmpty();
  }
}
