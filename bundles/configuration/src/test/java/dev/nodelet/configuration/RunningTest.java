package dev.nodelet.configuration;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The running instance is replaced and closed once; what the component was given moves to each new instance. */
class RunningTest {

  /** An instance that records what it is handed and when it is closed. */
  private static final class Instance implements AutoCloseable {
    final String name;
    final List<String> events;

    Instance(String name, List<String> events) {
      this.name = name;
      this.events = events;
    }

    void add(String item) {
      events.add(name + " +" + item);
    }

    void remove(String item) {
      events.add(name + " -" + item);
    }

    @Override
    public void close() {
      events.add(name + " closed");
    }
  }

  @Test
  void itemsGoToTheInstanceRunningAndToEachOneThatReplacesIt() {
    List<String> events = new ArrayList<>();
    Running<Instance> running = new Running<>();
    Running<Instance>.Handed<Character, String> items =
        running.handing(item -> item.charAt(0), Instance::add, Instance::remove);
    items.add("a1");
    assertThat(running.ask(i -> i.name, "none")).as("none runs yet").isEqualTo("none");

    Instance first = new Instance("first", events);
    items.handTo(first);
    running.replace(first);
    items.add("b1");
    items.add("a2"); // replaces a1
    Instance second = new Instance("second", events);
    items.handTo(second);
    running.replace(second);
    items.remove("b1");
    running.stop();
    assertThat(running.closed()).as("stopped, not closed for good").isFalse();
    items.add("c1");
    Instance third = new Instance("third", events);
    items.handTo(third);
    running.replace(third);
    running.close();
    running.close();
    items.add("d1");

    assertThat(events).containsExactly("first +a1", "first +b1", "first +a2", "second +a2", "second +b1",
        "first closed", "second -b1", "second closed", "third +a2", "third +c1", "third closed");
    assertThat(running.get()).isEmpty();
    assertThat(running.closed()).isTrue();
  }

  @Test
  void aRetiringHookEndsReplacedInstancesInItsOwnTimeWhileStopAndCloseCloseAtOnce() {
    List<String> events = new ArrayList<>();
    List<Instance> retired = new ArrayList<>();
    Running<Instance> running = Running.retiring(retired::add);
    Instance first = new Instance("first", events);
    running.replace(first);
    Instance second = new Instance("second", events);
    running.replace(second);
    assertThat(retired).as("handed to the hook, not closed").containsExactly(first);
    assertThat(events).isEmpty();
    assertThat(running.ask(i -> i.name, "none")).isEqualTo("second");

    running.stop();
    assertThat(events).as("stopped: closed at once").containsExactly("second closed");
    Instance third = new Instance("third", events);
    running.replace(third);
    running.close();
    assertThat(events).containsExactly("second closed", "third closed");
    assertThat(retired).containsExactly(first);
  }

  @Test
  void closingTheConfigurationWithdrawsTheServicesThenClosesWhatItOwnsInOrder() {
    List<String> events = new ArrayList<>();
    RecordingPublisher registry = new RecordingPublisher();
    Running<Instance> running = new Running<>();
    AutoCloseable failing = () -> {
      throw new IllegalStateException("disk gone");
    };
    LastGoodConfiguration<String, String> config = LastGoodConfiguration.waiting("pid", "the thing",
        (String value) -> value, registry).publishing("service", Map.of(), CharSequence.class)
        .closing(running, failing, () -> events.add("directory closed"));
    config.apply("one", Map.of(), value -> running.replace(new Instance(value, events)));
    config.close();
    assertThat(registry.registered).isEmpty();
    assertThat(events).as("a failing resource does not keep the next open")
        .containsExactly("one closed", "directory closed");
    assertThat(running.get()).isEmpty();
    assertThat(running.closed()).isTrue();
  }
}
