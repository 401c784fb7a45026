package dev.nodelet.dra.internal;

import dev.nodelet.dra.runtime.ManualScheduler;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class WorkQueueTest {

  private final ManualScheduler time = new ManualScheduler();
  private final WorkQueue<String> queue = new WorkQueue<>(new RateLimiter<>(Duration.ofMillis(5),
      Duration.ofSeconds(1000), 10, 100, time::nanoTime), time);

  @Test
  void anItemIsQueuedOnceAndInOrder() throws InterruptedException {
    queue.add("a");
    queue.add("b");
    queue.add("a");
    assertThat(queue.length()).isEqualTo(2);
    assertThat(queue.take()).isEqualTo("a");
    assertThat(queue.take()).isEqualTo("b");
    assertThat(queue.length()).isZero();
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
  void shutDownReleasesAWaitingTakerAndIgnoresLaterAdds() throws Exception {
    CompletableFuture<String> taken = CompletableFuture.supplyAsync(() -> {
      try {
        return queue.take();
      } catch (InterruptedException e) {
        throw new IllegalStateException(e);
      }
    });
    queue.shutDown();
    assertThat(taken.get(30, TimeUnit.SECONDS)).isNull(); // a bound for a hang, not a measure
    queue.add("a");
    assertThat(queue.length()).isZero();
  }
}
