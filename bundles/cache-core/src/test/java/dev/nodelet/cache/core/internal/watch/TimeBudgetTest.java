package dev.nodelet.cache.core.internal.watch;

import static org.assertj.core.api.Assertions.assertThat;

import dev.nodelet.objectcache.testing.MutableClock;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The dispatcher's shared time budget. */
class TimeBudgetTest {

  private static final long MS = 1_000_000;

  private final MutableClock clock = new MutableClock();
  private final TimeBudget budget = new TimeBudget(clock, Duration.ofMillis(100), Duration.ofMillis(50));

  @Test
  void rule5_4_budgetStartsEmptyAndRefills50MsPerSecond() {
    assertThat(budget.takeAvailable()).isZero();

    clock.advance(Duration.ofSeconds(1));

    assertThat(budget.takeAvailable()).isEqualTo(50 * MS);
    assertThat(budget.takeAvailable()).as("taken whole").isZero();
  }

  @Test
  void rule5_4_budgetIsAtMost100Ms() {
    clock.advance(Duration.ofMinutes(10));

    assertThat(budget.takeAvailable()).isEqualTo(100 * MS);
  }

  @Test
  void rule5_4_unusedTimeIsReturnedUpToTheMaximum() {
    clock.advance(Duration.ofSeconds(2));
    long taken = budget.takeAvailable();

    budget.returnUnused(taken - 30 * MS);
    assertThat(budget.takeAvailable()).isEqualTo(70 * MS);

    budget.returnUnused(-5 * MS);
    assertThat(budget.takeAvailable()).as("an overrun returns nothing").isZero();

    budget.returnUnused(500 * MS);
    assertThat(budget.takeAvailable()).isEqualTo(100 * MS);
  }
}
