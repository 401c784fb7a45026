/**
 * Karaf shell commands of Nodelet, scope {@code nodelet}: {@code pods}, {@code objects}, {@code get},
 * {@code strategy} on the object cache and {@code drivers}, {@code slices} on the DRA node controller.
 *
 * <p>The text comes from {@link dev.nodelet.shell.views.ObjectViews} and {@link dev.nodelet.dra.DraViews}, the same
 * as the Gogo commands print, so Secret data is redacted the same way. Not exported: Karaf finds the commands
 * through the {@code Karaf-Commands} manifest header.
 */
package dev.nodelet.karaf.shell;
