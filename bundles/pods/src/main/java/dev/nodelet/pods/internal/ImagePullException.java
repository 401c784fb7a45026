package dev.nodelet.pods.internal;

/** The bundle an image names cannot be had: the message names the image and why, for the container's status. */
final class ImagePullException extends Exception {

  private static final long serialVersionUID = 1L;

  ImagePullException(String message) {
    super(message);
  }
}
