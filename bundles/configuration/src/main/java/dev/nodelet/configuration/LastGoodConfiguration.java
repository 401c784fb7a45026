package dev.nodelet.configuration;

import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one way a Nodelet component takes its configuration: each configuration is validated into settings; at
 * activation an invalid one fails the activation, later an invalid one is refused with one error naming the key and
 * the last good settings stay in force. The component applies what {@link #offer} returns from its
 * {@code @Modified} method, in place; Declarative Services then publishes the new service properties, and consumers
 * (the managers, for a store strategy) take the new service state from there.
 *
 * @param <C> the configuration type (an {@code @ObjectClassDefinition} interface)
 * @param <S> the validated settings; {@code equals} tells an unchanged configuration (settings without
 *     {@code equals} are applied every time)
 */
public final class LastGoodConfiguration<C, S> {

  private static final Logger LOG = LoggerFactory.getLogger(LastGoodConfiguration.class);

  private final String pid;
  private final String component;
  private final Function<? super C, ? extends S> validate;
  private volatile S current; // null until a valid configuration came (waiting only)

  private LastGoodConfiguration(String pid, String component, Function<? super C, ? extends S> validate, S first) {
    this.pid = pid;
    this.component = component;
    this.validate = Objects.requireNonNull(validate, "validate");
    this.current = first;
  }

  /**
   * Validates the configuration a component is activated with.
   *
   * @param pid the configuration PID, for messages
   * @param component what the component is, for messages, e.g. "the watch store strategy"
   * @param config the configuration
   * @param validate turns a configuration into settings; throws {@link IllegalArgumentException} naming the key
   *     that is wrong and why
   * @param <C> the configuration type
   * @param <S> the settings type
   * @return the helper, holding the settings
   * @throws IllegalArgumentException the validator's, after logging it: the activation fails
   */
  public static <C, S> LastGoodConfiguration<C, S> activate(String pid, String component, C config,
      Function<? super C, ? extends S> validate) {
    Objects.requireNonNull(validate, "validate");
    try {
      return new LastGoodConfiguration<>(pid, component, validate, Objects.requireNonNull(validate.apply(config)));
    } catch (IllegalArgumentException e) {
      LOG.error("Configuration {} is invalid, {} does not start: {}", pid, component, e.getMessage());
      throw e;
    }
  }

  /**
   * For a component that stays active without a valid configuration and provides nothing until one comes (the
   * Kubernetes client: its consumers wait for its services). Every configuration, the first included, goes through
   * {@link #offer}.
   *
   * @param pid the configuration PID, for messages
   * @param component what the component is, for messages
   * @param validate as for {@link #activate}
   * @param <C> the configuration type
   * @param <S> the settings type
   * @return the helper, holding no settings yet
   */
  public static <C, S> LastGoodConfiguration<C, S> waiting(String pid, String component,
      Function<? super C, ? extends S> validate) {
    return new LastGoodConfiguration<>(pid, component, validate, null);
  }

  /**
   * @return the settings in force
   * @throws IllegalStateException if no valid configuration came yet (only after {@link #waiting})
   */
  public S current() {
    S settings = current;
    if (settings == null) {
      throw new IllegalStateException("Configuration " + pid + ": " + component + " has no valid configuration yet");
    }
    return settings;
  }

  /** @return the settings in force; empty until a valid configuration came (only after {@link #waiting}) */
  public Optional<S> settings() {
    return Optional.ofNullable(current);
  }

  /**
   * A new configuration (for the component's {@code @Modified} method). Never throws for an invalid one.
   *
   * @param config the configuration
   * @return the new settings, now in force, if the configuration is valid and differs from the settings in force;
   *     empty if it is unchanged, or invalid (then an error naming the key is logged and the settings stay)
   */
  public synchronized Optional<S> offer(C config) {
    S next;
    try {
      next = Objects.requireNonNull(validate.apply(config));
    } catch (IllegalArgumentException e) {
      if (current == null) {
        LOG.error("Configuration {} is invalid, {} waits for a valid one: {}", pid, component, e.getMessage());
      } else {
        LOG.error("Configuration {} refused, {} keeps its last good configuration ({}): {}", pid, component,
            current, e.getMessage());
      }
      return Optional.empty();
    }
    if (next.equals(current)) {
      return Optional.empty();
    }
    current = next;
    LOG.info("Configuration {} applied to {}: {}", pid, component, next);
    return Optional.of(next);
  }
}
