package dev.nodelet.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class WorkQueueTest {

  private final DrivableScheduler time = new DrivableScheduler();
  private final WorkQueue<String> queue = new WorkQueue<>(
      RateLimiter.controller(Duration.ofMillis(5), Duration.ofSeconds(1000), 10, 100, time::nanoTime), time);

  @Test
  void anItemIsQueuedOnceAndInOrder() throws InterruptedException {
    queue.add("a");
    queue.add("b");
    queue.add("a");
    assertThat(queue.length()).isEqualTo(2);
    assertThat(queue.take()).isEqualTo("a");
    assertThat(queue.take()).isEqualTo("b");
    assertThat(queue.length()).isZero();
    assertThat(queue.poll()).isNull();
  }

  @Test
  void anItemAddedWhileProcessedIsQueuedAgainOnlyWhenDone() throws InterruptedException {
    queue.add("a");
    assertThat(queue.take()).isEqualTo("a");
    queue.add("a");
    queue.add("a");
    assertThat(queue.length()).as("never handed to a second worker while processed").isZero();
    queue.done("a");
    assertThat(queue.length()).isEqualTo(1);
    assertThat(queue.take()).isEqualTo("a");
    queue.done("a");
    assertThat(queue.length()).isZero();
  }

  @Test
  void rateLimitedAddsWaitForTheLimiterAndForgetResetsTheDelay() throws InterruptedException {
    queue.addRateLimited("a");
    queue.addRateLimited("a");
    assertThat(time.pendingDelays()).containsExactly(Duration.ofMillis(5), Duration.ofMillis(10));
    assertThat(queue.numRequeues("a")).isEqualTo(2);
    assertThat(queue.length()).isZero();
    time.advance(Duration.ofMillis(5));
    assertThat(queue.take()).isEqualTo("a");
    queue.done("a");
    time.advance(Duration.ofMillis(5));
    assertThat(queue.length()).isEqualTo(1);

    queue.forget("a");
    queue.addRateLimited("a");
    assertThat(time.pendingDelays()).containsExactly(Duration.ofMillis(5));
  }

  @Test
  void addAfterWaitsForTheDelay() {
    queue.addAfter("a", Duration.ofSeconds(2));
    queue.addAfter("b", Duration.ZERO);
    assertThat(queue.poll()).isEqualTo("b");
    time.advance(Duration.ofMillis(1999));
    assertThat(queue.poll()).isNull();
    time.advance(Duration.ofMillis(1));
    assertThat(queue.poll()).isEqualTo("a");
    assertThat(queue.delayedCount()).isZero();
  }

  @Test
  void shutDownReleasesAWaitingTakerCancelsDelayedAddsAndIgnoresLaterAdds() throws Exception {
    CompletableFuture<String> taken = CompletableFuture.supplyAsync(() -> {
      try {
        return queue.take();
      } catch (InterruptedException e) {
        throw new IllegalStateException(e);
      }
    });
    queue.addAfter("later", Duration.ofSeconds(1));
    assertThat(time.pending()).isEqualTo(1);
    queue.shutDown();
    assertThat(taken.get(30, TimeUnit.SECONDS)).isNull(); // a bound for a hang, not a measure
    assertThat(time.pending()).as("the delayed add is cancelled").isZero();
    queue.add("a");
    queue.addAfter("b", Duration.ofSeconds(1));
    assertThat(queue.length()).isZero();
    assertThat(time.pending()).isZero();
    assertThat(queue.isShutDown()).isTrue();
  }

  @Test
  void aWorkerOnARealSchedulerRetriesAFailingItemAndLeavesNoThreadBehind() throws Exception {
    List<String> processed = new ArrayList<>();
    Thread worker;
    try (ExecutorScheduler real = new ExecutorScheduler("workqueue-test-timer")) {
      WorkQueue<String> q = new WorkQueue<>(RateLimiter.itemExponential(Duration.ofMillis(1),
          Duration.ofMillis(10)), real);
      worker = new Thread(() -> {
        try {
          for (String item = q.take(); item != null; item = q.take()) {
            synchronized (processed) {
              processed.add(item);
            }
            if (q.numRequeues(item) < 3) {
              q.addRateLimited(item); // fails three times, then succeeds
            } else {
              q.forget(item);
            }
            q.done(item);
          }
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }, "workqueue-test-worker");
      worker.start();
      q.add("x");
      await().atMost(Duration.ofSeconds(30)).until(() -> {
        synchronized (processed) {
          return processed.size() == 4;
        }
      });
      assertThat(q.numRequeues("x")).isZero();
      q.shutDown();
      worker.join(30_000);
    }
    assertThat(worker.isAlive()).isFalse();
    assertThat(Thread.getAllStackTraces().keySet()).noneMatch(t -> t.getName().startsWith("workqueue-test"));
  }
}
