package dev.nodelet.dra;

import org.osgi.annotation.versioning.ConsumerType;

/**
 * The handle of one stream ({@link DeviceSnapshots#subscribe}, {@link DeviceHealthSource#watchHealth}). Implemented by
 * drivers.
 */
@ConsumerType
public interface Subscription extends AutoCloseable {

  /**
   * Ends the stream: the driver stops calling the listener and releases what the stream holds (threads, a gRPC
   * call). Idempotent; never throws and never blocks for long.
   */
  @Override
  void close();
}
